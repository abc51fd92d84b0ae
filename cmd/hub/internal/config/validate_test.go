package config

import (
	"strings"
	"testing"
)

// TestLintEverySectionProblemAtItsKey: a section with several problems reports each of
// them, each at its own key, in one run (the sections' validators join every problem;
// a library's joined Validate errors are split the same way).
func TestLintEverySectionProblemAtItsKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		yaml string
		want []string // "line:col: path: message-fragment"
	}{
		{"Store", "store:\n  postgres: mysql://x\n  schema: bad-name\n",
			[]string{`2:13: store.postgres: expected a postgres:// URL`, `3:11: store.schema: ledger: Schema "bad-name"`}},
		{"Ledger", "store:\n  sqlite: a.db\n  ledger:\n    fetch_cooldown: 1us\n    job_timeout: 10s\n    rescue_stuck_jobs_after: 5s\n    max_conns: -1\n    dsn: x.db\n",
			[]string{
				`4:21: store.ledger.fetch_cooldown: ledger: FetchCooldown 1µs: at least 1ms`,
				`6:30: store.ledger.rescue_stuck_jobs_after: ledger: RescueStuckJobsAfter 5s: must exceed JobTimeout 10s`,
				`7:16: store.ledger.max_conns: ledger: MaxConns -1: at least 2 (River's listener holds one connection as long as the ledger runs, and opening holds one for the migration lock while migrating on another: with one the hub waits forever)`,
				`8:10: store.ledger.dsn: the ledger's database is the store's`,
			}},
		{"LedgerUnknownKey", "store:\n  sqlite: a.db\n  ledger:\n    job_timeot: 1s\n",
			[]string{`4:5: store.ledger.job_timeot: unknown key "job_timeot"`}},
		{"Route", "transports:\n  r: {type: redisstream}\nroutes:\n  - pattern: 'a.*.#'\n    to: [r, s]\n    retry:\n      attempts: -1\n      backoff: -1s\n",
			[]string{
				`5:13: routes[0].to[1]: unknown transport "s"`,
				`7:17: routes[0].retry.attempts: must not be negative`,
				`8:16: routes[0].retry.backoff: must not be negative`,
			}},
		{"Listeners", "admin:\n  listen: nowhere\nmetrics:\n  listen: 9090\n",
			[]string{`2:11: admin.listen: expected host:port, got "nowhere"`, `4:11: metrics.listen: expected host:port, got "9090"`}},
		{"SchemaFiles", "schemas:\n  files:\n    - type: 'a.*'\n      major: -1\n",
			[]string{`3:7: schemas.files[0].path: required`, `3:13: schemas.files[0].type: not an event type`, `4:14: schemas.files[0].major: must not be negative`}},
	}
	for _, c := range cases {
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
}
