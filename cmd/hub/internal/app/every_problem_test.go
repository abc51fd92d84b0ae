package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
)

// singletonTest is a module that declares itself one per hub.
type singletonTest struct{}

func (*singletonTest) HubModule() registry.Info {
	return registry.Info{ID: "transport.singletontest", New: func() registry.Module { return new(singletonTest) }}
}
func (*singletonTest) Singleton() string { return "merge the sections" }
func (*singletonTest) Open(context.Context, *registry.Runtime) (hub.Transport, error) {
	return closeRecorder{"singleton/"}, nil
}

func init() { registry.Register(new(singletonTest)) }

// TestLintModuleEveryProblemAtItsKey: a module section with several problems reports
// each at its own key, a required key that is missing included; a module that declares
// itself a Singleton gets every further section reported.
func TestLintModuleEveryProblemAtItsKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"StreamSource",
			"sources:\n  in:\n    type: redisstream\n    url: redis://x\n    group: Bad\n    count: -1\n    concurrency: -2\n    claim_min_idle: -1s\n",
			[]string{
				`hub.yaml:3:5: sources.in.stream: streams: ConsumerConfig.Stream is required`,
				`hub.yaml:5:12: sources.in.group: streams: group "Bad" must be <service>-<purpose>`,
				`hub.yaml:6:12: sources.in.count: streams: ConsumerConfig.Count must be positive, got -1`,
				`hub.yaml:7:18: sources.in.concurrency: streams: ConsumerConfig.Concurrency must be positive, got -2`,
				`hub.yaml:8:21: sources.in.claim_min_idle: streams: ConsumerConfig.ClaimMinIdle must not be negative, got -1s`,
			}},
		{"StreamTransport",
			"transports:\n  r:\n    type: redisstream\n    url: redis://x\n    stream: s\n    min_id_age: -1s\n    max_batch: -1\n    default_actor: ' x'\n",
			[]string{
				`hub.yaml:6:17: transports.r.min_id_age: redisstream: Config.MinIDAge must not be negative, got -1s`,
				`hub.yaml:7:16: transports.r.max_batch: redisstream: Config.MaxBatch must be positive, got -1`,
				`hub.yaml:8:20: transports.r.default_actor: redisstream: Config.DefaultActor " x" must be valid UTF-8 without surrounding spaces`,
			}},
		{"KDBSourceWithoutStore",
			"sources:\n  in:\n    type: kdbstream\n    stream: s\n    group: hub-in\n",
			[]string{`hub.yaml:3:5: sources.in.url: provision: url: required without a store`}},
		{"Singleton",
			"transports:\n  a: {type: singletontest}\n  b: {type: singletontest}\n  c:\n    type: singletontest\n",
			[]string{
				`hub.yaml:3:13: transports.b.type: only one singletontest transport per hub: merge the sections`,
				`hub.yaml:5:11: transports.c.type: only one singletontest transport per hub: merge the sections`,
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ps := lint(t, c.yaml, nil)
			if len(ps) != len(c.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(c.want), ps)
			}
			for i, p := range ps {
				if !strings.Contains(p.String(), c.want[i]) {
					t.Errorf("problem %d:\n got  %s\n want %s", i, p, c.want[i])
				}
			}
		})
	}
}
