package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koder/eventhub/cmd/hub/internal/app"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	_ "github.com/koder/eventhub/cmd/hub/internal/modules"
)

func env(m map[string]string) config.Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// lint is what `hub lint` runs: config problems, then the module build path.
func lint(t *testing.T, yaml string, vars map[string]string) config.Problems {
	t.Helper()
	f, ps := config.Parse("hub.yaml", t.TempDir(), []byte(yaml), env(vars))
	if f == nil {
		return ps
	}
	_, bps := app.Build(f, env(vars), nil)
	all := append(ps, bps...)
	all.Sort()
	return all
}

// TestLintModules pins where module problems are reported: on the key they are about.
func TestLintModules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		yaml string
		vars map[string]string
		want []string
	}{
		{"UnknownModuleType",
			"transports:\n  r:\n    type: kafka\n",
			nil, []string{`hub.yaml:3:11: transports.r.type: unknown transport type "kafka" (known: `}},
		{"UnknownModuleKey",
			"transports:\n  r:\n    type: redisstream\n    url: redis://127.0.0.1:6379\n    streem: x\n",
			nil, []string{`hub.yaml:5:5: transports.r.streem: unknown key "streem"`}},
		{"RedisURLFromEnvironment",
			"transports:\n  r:\n    type: redisstream\n    stream: s\n",
			map[string]string{"KODER_REDIS_URL": "redis://127.0.0.1:6379/0"}, nil},
		{"RedisWithoutURL",
			"transports:\n  r:\n    type: redisstream\n    stream: s\n",
			nil, []string{`hub.yaml:3:5: transports.r.url: required (or set KODER_REDIS_URL)`}},
		{"RedisBadScheme",
			"transports:\n  r:\n    type: redisstream\n    stream: s\n    url: http://x\n",
			nil, []string{`hub.yaml:5:10: transports.r.url: redisstream: URL http://x: scheme must be`}},
		{"RedisExclusiveNaming",
			"transports:\n  r:\n    type: redisstream\n    url: redis://x\n    service: id\n    stream: s\n",
			nil, []string{`hub.yaml:5:14: transports.r.service: redisstream: Config.Service/Naming, Config.Stream and Config.Namer are exclusive`}},
		{"RabbitBadMode",
			"transports:\n  q:\n    type: rabbitmq\n    url: amqp://x\n    mode: fast\n",
			nil, []string{`hub.yaml:5:11: transports.q.mode: rabbitmq: mode: "fast"`}},
		{"RabbitEveryProblem",
			"transports:\n  q:\n    type: rabbitmq\n    mode: fast\n    prefetch: 70000\n",
			nil, []string{`3:5: transports.q: rabbitmq: url: required`, `4:11: transports.q.mode:`, `5:15: transports.q.prefetch:`}},
		{"DurationAsNumberInModule",
			"sources:\n  in:\n    type: redisstream\n    url: redis://x\n    stream: s\n    group: hub-ingest\n    block: 5\n",
			nil, []string{`hub.yaml:7:12: sources.in.block: duration 5 needs a unit`}},
		{"GroupNaming",
			"sources:\n  in:\n    type: redisstream\n    url: redis://x\n    stream: s\n    group: Ingest\n",
			nil, []string{`hub.yaml:6:12: sources.in.group: streams: group "Ingest" must be <service>-<purpose>`}},
		{"HTTPSourceBadListen",
			"sources:\n  in:\n    type: http\n    listen: 8080\n",
			nil, []string{`hub.yaml:4:13: sources.in.listen: expected host:port, got "8080"`}},
		{"RedisBadEncoding",
			"transports:\n  r:\n    type: redisstream\n    url: redis://x\n    stream: s\n    encoding: avro\n",
			nil, []string{`hub.yaml:6:15: transports.r.encoding: redisstream: Config.Encoding: streams: encoding "avro": want "r2" or "seed001"`}},
		{"KDBBadDefaultActor",
			"store: {sqlite: x.db}\ntransports:\n  k:\n    type: kdbstream\n    stream: s\n    default_actor: \" system\"\n",
			nil, []string{`hub.yaml:6:20: transports.k.default_actor: kdbstream: Config.DefaultActor " system" must be valid UTF-8 without surrounding spaces`}},
		{"SourceBadEncoding",
			"sources:\n  in:\n    type: redisstream\n    url: redis://x\n    stream: s\n    group: hub-ingest\n    encoding: seed000\n",
			nil, []string{`hub.yaml:7:15: sources.in.encoding: streams: ConsumerConfig.Encoding must be "r2" or "seed001", got "seed000"`}},
		{"OneWebhookTransport",
			"store: {sqlite: x.db}\ntransports:\n  a: {type: webhook}\n  b:\n    type: webhook\n",
			nil, []string{`hub.yaml:5:11: transports.b.type: only one webhook transport per hub`}},
		{"SchemaFileMissing",
			"schemas:\n  files:\n    - type: billing.paid\n      path: nope.json\n",
			nil, []string{`hub.yaml:4:13: schemas.files[0].path: open `}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ps := lint(t, c.yaml, c.vars)
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

func TestLintSchemaFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "paid.json"), []byte(`{"type":"object","required":["amount"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f, ps := config.Parse("hub.yaml", dir, []byte("schemas:\n  files:\n    - type: billing.paid\n      path: paid.json\n"), env(nil))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	p, ps := app.Build(f, env(nil), nil)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	found := false
	for _, ti := range p.Schemas.Types() {
		found = found || ti.Type == "billing.paid"
	}
	if !found {
		t.Error("billing.paid not registered")
	}
}

// TestE8_LintShowsRetention: `hub lint` of a clean config shows each stream transport's
// retention (R6 for R1 streams, E8 for per-category ones) and entry format.
func TestE8_LintShowsRetention(t *testing.T) {
	t.Parallel()
	f, ps := config.Parse("hub.yaml", t.TempDir(), []byte(`store: {sqlite: x.db}
transports:
  ids:
    type: kdbstream
    service: id
  users:
    type: redisstream
    url: redis://127.0.0.1:6379/0
    naming: category
    encoding: seed001
routes:
  - {pattern: "#", to: ids, default_subject: unspecified}
  - {pattern: "user.#", to: users}
`), env(nil))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	plan, ps := app.Build(f, env(nil), nil)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	got := strings.Join(plan.Notes(), "\n")
	for _, want := range []string{
		"hub.yaml:4:5: transports.ids: note: retention: MAXLEN ~ 100000 (R6)",
		`transports.ids: note: entries: r2 (seed 000 fields, none empty); actor "system"`,
		"hub.yaml:7:5: transports.users: note: retention: MINID ~ 7 days (E8)",
		"transports.users: note: entries: seed001",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("notes lack %q:\n%s", want, got)
		}
	}
}
