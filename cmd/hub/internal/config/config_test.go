package config

import (
	"strings"
	"testing"
	"time"
)

func envMap(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	t.Parallel()
	env := envMap(map[string]string{"HOST": "redis.local", "EMPTY": "", "PORT": "6380"})
	cases := []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "${HOST}", want: "redis.local"},
		{in: "redis://${HOST}:${PORT}/0", want: "redis://redis.local:6380/0"},
		{in: "${MISSING:-fallback}", want: "fallback"},
		{in: "${EMPTY:-fallback}", want: "fallback"},
		{in: "${EMPTY}", want: ""},
		{in: "${MISSING:-}", want: ""},
		{in: "${MISSING:-a:b/c}", want: "a:b/c"},
		{in: "pa$$word", want: "pa$word"},
		{in: "cost $5", want: "cost $5"},
		{in: "trailing $", want: "trailing $"},
		{in: "${MISSING}", err: "MISSING is not set"},
		{in: "${A B}", err: "invalid variable name"},
		{in: "${1X}", err: "invalid variable name"},
		{in: "${HOST", err: "unterminated"},
	}
	for _, c := range cases {
		got, err := Expand(c.in, env)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Expand(%q) error = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

const goodConfig = `
log:
  level: debug
  format: json
store:
  sqlite: ${DATA:-./data}/hub.db
schemas:
  files:
    - type: billing.invoice.paid
      path: schemas/invoice.json
sources:
  ingress:
    type: http
    listen: 127.0.0.1:8080
transports:
  redis:
    type: redisstream
routes:
  - pattern: "identity.#"
    to: redis
    retry:
      attempts: ${ATTEMPTS:-5}
      backoff: 2s
  - pattern: "*"
    to: [redis]
    delivery: outbox
admin:
  listen: 127.0.0.1:9000
shutdown_timeout: 30s
`

func TestParse(t *testing.T) {
	t.Parallel()
	t.Run("GoodConfigDecodes", func(t *testing.T) {
		t.Parallel()
		f, ps := Parse("hub.yaml", "/etc/hub", []byte(goodConfig), envMap(map[string]string{"ATTEMPTS": "7"}))
		if len(ps) > 0 {
			t.Fatalf("problems: %v", ps)
		}
		c := f.Config
		if c.Store.SQLite != "./data/hub.db" {
			t.Errorf("store.sqlite = %q", c.Store.SQLite)
		}
		if c.Routes[0].Retry.Attempts != 7 || c.Routes[0].Retry.Backoff != 2*time.Second {
			t.Errorf("retry = %+v (substituted int and duration string expected)", c.Routes[0].Retry)
		}
		if got := c.Routes[0].To; len(got) != 1 || got[0] != "redis" {
			t.Errorf("to = %v", got)
		}
		if c.Routes[0].Delivery != DeliveryDirect || c.Routes[1].Delivery != DeliveryOutbox {
			t.Errorf("delivery = %q, %q", c.Routes[0].Delivery, c.Routes[1].Delivery)
		}
		if c.Schemas.Files[0].Major != 1 || !c.Schemas.BuiltinSchemas() {
			t.Errorf("schema defaults not applied: %+v", c.Schemas)
		}
		if c.ShutdownTimeout != 30*time.Second || c.Admin.Listen != "127.0.0.1:9000" {
			t.Errorf("shutdown/admin = %v %q", c.ShutdownTimeout, c.Admin.Listen)
		}
		if m := c.Transports["redis"]; m.Type != "redisstream" || len(m.Body().Content) != 0 {
			t.Errorf("module = %+v", m)
		}
		if f.Resolve("schemas/invoice.json") != "/etc/hub/schemas/invoice.json" {
			t.Errorf("Resolve = %q", f.Resolve("schemas/invoice.json"))
		}
	})
	t.Run("EmptyFileIsEmptyConfig", func(t *testing.T) {
		t.Parallel()
		f, ps := Parse("e.yaml", "", nil, envMap(nil))
		if len(ps) > 0 || f.Config.Admin.Listen != DefaultAdminListen {
			t.Fatalf("problems %v, admin %q", ps, f.Config.Admin.Listen)
		}
	})
}

// TestLintLineNumbers pins the location and text of each kind of problem: the output
// of `hub lint` is an interface editors and CI logs depend on.
func TestLintLineNumbers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		yaml string
		want []string // "line:col: path: message-fragment"
	}{
		{"UnknownTopLevelKey", "log:\n  level: info\nroutez: []\n",
			[]string{`3:1: routez: unknown key "routez"`}},
		{"UnknownNestedKey", "admin:\n  listen: 127.0.0.1:1\n  tokn: x\n",
			[]string{`3:3: admin.tokn: unknown key "tokn" (did you mean "token"?) (known keys: hosts, listen, max_concurrent, origins, tls, token, token_file, ui)`}},
		{"DurationWithoutUnit", "shutdown_timeout: 5\n",
			[]string{`1:19: shutdown_timeout: duration 5 needs a unit`}},
		{"BadDuration", "shutdown_timeout: soon\n",
			[]string{`1:19: shutdown_timeout: invalid duration "soon"`}},
		{"WrongShape", "routes:\n  pattern: a\n",
			[]string{`2:3: routes: expected a list, got a mapping`}},
		{"BadInt", "routes:\n  - pattern: a\n    to: x\n    retry:\n      attempts: many\n",
			[]string{`3:9: routes[0].to: unknown transport "x"`, `5:17: routes[0].retry.attempts: cannot use "many" as a int`}},
		{"RouteDefaultSubjectSpaces", "transports:\n  r:\n    type: redisstream\nroutes:\n  - pattern: a\n    to: r\n    default_subject: \" x\"\n",
			[]string{`7:22: routes[0].default_subject: must not start or end with spaces`}},
		{"UnsetVariable", "store:\n  postgres: ${PG_DSN}\n",
			[]string{`2:13: environment variable PG_DSN is not set`}},
		{"BothStores", "store:\n  sqlite: a.db\n  postgres: postgres://x/y\n",
			[]string{`3:13: store.postgres: set either store.sqlite or store.postgres, not both`}},
		{"RouteProblems", "transports:\n  r:\n    type: redisstream\nroutes:\n  - pattern: a.b*\n    to: [r, nope, r]\n    delivery: later\n",
			[]string{
				`5:14: routes[0].pattern: pattern "a.b*": wildcard inside word "b*"`,
				`6:13: routes[0].to[1]: unknown transport "nope" (defined: r)`,
				`6:19: routes[0].to[2]: transport "r" listed twice`,
				`7:15: routes[0].delivery: unknown delivery "later"`,
			}},
		{"MisspeltTransportSuggested", "transports:\n  rabbitmq: {type: rabbitmq}\nroutes:\n  - {pattern: 'a.#', to: rabitmq}\n",
			[]string{`4:26: routes[0].to: unknown transport "rabitmq" (did you mean "rabbitmq"?) (defined: rabbitmq)`}},
		{"SameTargetTwice", "transports:\n  r: {type: redisstream}\nroutes:\n  - {pattern: 'a.#', to: r}\n  - {pattern: 'a.#', to: [r]}\n",
			[]string{`5:26: routes[1].to: routes[0] already sends "a.#" to "r"`}},
		{"MissingPatternLocatedAtRoute", "transports:\n  r: {type: redisstream}\nroutes:\n  - to: r\n",
			[]string{`4:5: routes[0].pattern: required`}},
		{"RetryIsForDirectRoutes", "store: {sqlite: a.db}\ntransports:\n  r: {type: redisstream}\nroutes:\n  - pattern: '#'\n    to: r\n    delivery: outbox\n    retry: {attempts: 5}\n",
			[]string{`8:12: routes[0].retry: retry applies to direct delivery`}},
		{"OutboxSection", "outbox:\n  max_attempts: -1\n  workerz: 3\n",
			[]string{`2:17: outbox.max_attempts: outbox: MaxAttempts -1: at least 1`, `3:3: outbox.workerz: unknown key "workerz"`}},
		{"OutboxValidate", "outbox:\n  backoff_base: 1m\n  backoff_max: 1s\n",
			[]string{`3:16: outbox.backoff_max: outbox: BackoffMax 1s: not below BackoffBase 1m0s`}},
		{"OutboxEveryProblem", "outbox:\n  max_attempts: -1\n  jitter: 2\n  schedule: [1s, -1s]\n",
			[]string{`2:17: outbox.max_attempts: outbox: MaxAttempts -1: at least 1`, `3:11: outbox.jitter: outbox: Jitter 2: at most 1`,
				`4:13: outbox.schedule: outbox: Schedule[1] -1s: must be positive`}},
		{"OutboxNeedsStore", "transports:\n  r: {type: redisstream}\nroutes:\n  - pattern: '#'\n    to: r\n    delivery: outbox\n",
			[]string{`6:15: routes[0].delivery: outbox delivery needs a store`}},
		{"ModuleWithoutType", "transports:\n  r:\n    url: redis://x\n",
			[]string{`3:5: transports.r: missing "type"`}},
		{"AdminOpenWithoutToken", "admin:\n  listen: 0.0.0.0:8081\n",
			[]string{`2:11: admin.listen: without admin.token the admin API may only listen on a loopback address`}},
		{"SyntaxError", "log:\n  level: [\n",
			[]string{`2:1: did not find expected node content`}},
		{"EveryProblemReported", "log:\n  level: loud\n  format: xml\n",
			[]string{`2:10: log.level: unknown level "loud"`, `3:11: log.format: unknown format "xml"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, ps := Parse("bad.yaml", "", []byte(c.yaml), envMap(nil))
			if len(ps) != len(c.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(c.want), ps)
			}
			for i, p := range ps {
				if !strings.HasPrefix(p.String(), "bad.yaml:") || !strings.Contains(p.String(), c.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, p.String(), c.want[i])
				}
			}
		})
	}
}
