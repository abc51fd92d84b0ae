package config

import (
	"strings"
	"testing"
)

// TestF1_FailuresSection pins where the binary records hub.transport.failed events and
// what lint refuses: a sink that is itself the target of a direct route (it is the one
// that fails), an unknown transport, a stream without a store.
func TestF1_FailuresSection(t *testing.T) {
	t.Parallel()
	const transports = "store:\n  sqlite: a.db\ntransports:\n  r: {type: redisstream}\n  k: {type: kdbstream, stream: s}\n"
	t.Run("Sink", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			yaml string
			want FailureSink
		}{
			{transports, FailureSink{Stream: DefaultFailureStream}},
			{transports + "failures:\n  stream: ops.failed\n", FailureSink{Stream: "ops.failed"}},
			{transports + "failures:\n  to: k\n", FailureSink{Transport: "k"}},
			{transports + "failures:\n  to: off\n", FailureSink{}},
			{"transports:\n  r: {type: redisstream}\n", FailureSink{}}, // no store: logged and counted only
		} {
			f, ps := Parse("hub.yaml", "", []byte(c.yaml), envMap(nil))
			if len(ps) > 0 {
				t.Fatalf("%s: %v", c.yaml, ps)
			}
			if got := f.Config.Sink(); got != c.want {
				t.Errorf("%s: sink %+v, want %+v", c.yaml, got, c.want)
			}
		}
	})
	t.Run("LintRefuses", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			name, yaml string
			want       []string
		}{
			{"SinkIsTheFailingTransport", transports + "routes:\n  - {pattern: '#', to: k, delivery: outbox}\n  - {pattern: 'a.#', to: [r, k]}\nfailures:\n  to: k\n",
				[]string{`10:7: failures.to: transport "k" is the target of direct route routes[1] ("a.#")`}},
			{"UnknownTransport", transports + "failures:\n  to: nope\n",
				[]string{`7:7: failures.to: unknown transport "nope" (defined: k, r; or "off")`}},
			{"StreamWithTransport", transports + "failures:\n  to: k\n  stream: x\n",
				[]string{`8:11: failures.stream: stream names the default sink's stream`}},
			{"StreamWhenOff", transports + "failures:\n  to: 'off'\n  stream: x\n",
				[]string{`8:11: failures.stream: failures.to is off`}},
			{"StreamWithoutStore", "failures:\n  stream: x\n",
				[]string{`2:11: failures.stream: the default failure sink is a kdbstream stream on the store`}},
			{"ReservedStream", transports + "failures:\n  stream: 'koder:events:'\n",
				[]string{`7:11: failures.stream: "koder:events:" uses the reserved prefix`}},
			{"UnknownKey", transports + "failures:\n  sink: k\n",
				[]string{`7:3: failures.sink: unknown key "sink"`}},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				_, ps := Parse("bad.yaml", "", []byte(c.yaml), envMap(nil))
				if len(ps) != len(c.want) {
					t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(c.want), ps)
				}
				for i, p := range ps {
					if !strings.Contains(p.String(), c.want[i]) {
						t.Errorf("problem %d = %q, want it to contain %q", i, p.String(), c.want[i])
					}
				}
			})
		}
	})
}
