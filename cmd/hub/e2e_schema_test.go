package main

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/internal/testenv"
)

// TestSEC_RunsAsARoleWithoutDDL: the tables made by their owner with `hub migrate
// schema`, the hub runs as a role that may only read and write rows (no CREATE on the
// schema or the database, owner of nothing: PostgreSQL refuses it every CREATE ... IF
// NOT EXISTS on an existing table, so any DDL at start would fail it) and carries an
// event through its ingress, dedupe table, kdbstream stream and webhook transport. When
// the schema is behind the version (a set's digest recorded by an older one), the start
// fails saying to run `hub migrate schema`, and does once that was run. `hub migrate
// schema --check`, as the owner or the role, lists what is pending and exits 1 until
// the migration ran; it creates nothing.
func TestSEC_RunsAsARoleWithoutDDL(t *testing.T) {
	t.Parallel()
	pgURL := testenv.PostgresURL(t)
	name := testenv.Name(t)
	ulid := name[len(name)-26:]
	schema, role := "e2e_"+ulid, "app_"+ulid
	ctx := testenv.Context(t, 3*time.Minute)
	owner, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx := context.Background()
		_, _ = owner.Exec(cctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		_, _ = owner.Exec(cctx, "DROP OWNED BY "+role)
		_, _ = owner.Exec(cctx, "DROP ROLE IF EXISTS "+role)
		owner.Close(cctx)
	})
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	roleURL := u.String()

	h := newPGHub(t, roleURL, schema)
	// The owner's checks run in read-only transactions: a write would fail them.
	ro, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	q := ro.Query()
	q.Set("default_transaction_read_only", "on")
	ro.RawQuery = q.Encode()
	// checkExit runs `hub migrate schema --check` (as the owner, read-only, when asOwner
	// is set; else as the config's role) and checks its exit code and that it lists
	// each of pending.
	checkExit := func(asOwner bool, want int, pending ...string) {
		t.Helper()
		args := []string{"migrate", "schema", "-c", h.cfg, "--check"}
		if asOwner {
			args = append(args, "--postgres", ro.String())
		}
		out, code := cliRun(t, h.dir, nil, args...)
		if code != want {
			t.Fatalf("hub migrate schema --check: exit %d, want %d\n%s", code, want, out)
		}
		for _, p := range pending {
			if !strings.Contains(out, "pending  "+p) {
				t.Fatalf("hub migrate schema --check does not list %q:\n%s", p, out)
			}
		}
	}
	check := func(asOwner bool, pending ...string) {
		t.Helper()
		want := 0
		if len(pending) > 0 {
			want = 1
		}
		checkExit(asOwner, want, pending...)
	}
	check(true, "schema "+schema)
	var made bool
	if err := owner.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&made); err != nil || made {
		t.Fatalf("schema made by --check: %v (%v); want nothing made", made, err)
	}
	// migrate runs `hub migrate schema` as the owner; it must say it applied each of
	// applied, or nothing when none is given.
	migrate := func(applied ...string) {
		t.Helper()
		out, code := cliRun(t, h.dir, nil, "migrate", "schema", "-c", h.cfg, "--postgres", pgURL)
		if code != 0 || !strings.Contains(out, "ok  transports.webhooks") || !strings.Contains(out, "ok  sources.ingress") {
			t.Fatalf("hub migrate schema: exit %d\n%s", code, out)
		}
		for _, a := range applied {
			if !strings.Contains(out, "applied  "+a+"\n") {
				t.Fatalf("hub migrate schema does not say it applied %q:\n%s", a, out)
			}
		}
		if len(applied) == 0 && !strings.Contains(out, "nothing to apply") {
			t.Fatalf("hub migrate schema on a schema at this version does not say it applied nothing:\n%s", out)
		}
	}
	migrate("DDL webhook.tables", "DDL dedupe.hub_event_ids", `index "`+schema+`"."webhook_delivery_order"`)
	migrate()
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO " + role,
		"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA " + schema + " TO " + role,
	} {
		if _, err := owner.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	check(true)  // as the owner: nothing pending
	check(false) // as the role: nothing pending
	// A grant missing is the check's error, not a pending migration (which would not
	// mend it).
	if _, err := owner.Exec(ctx, "REVOKE SELECT ON "+schema+".webhook_endpoints FROM "+role); err != nil {
		t.Fatal(err)
	}
	checkExit(false, 3)
	if _, err := owner.Exec(ctx, "GRANT SELECT ON "+schema+".webhook_endpoints TO "+role); err != nil {
		t.Fatal(err)
	}
	p := startHub(t, h.cfg, h.admin)
	h.deliverOne(t)
	if code := p.stop(); code != 0 {
		t.Fatalf("exit code after SIGTERM = %d, want 0\n%s", code, p.log())
	}

	// An older version's set recorded: this version's DDL must run, and this role may not.
	if _, err := owner.Exec(ctx, "UPDATE "+schema+".eventhub_schema SET digest = 'older' WHERE name = 'webhook.tables'"); err != nil {
		t.Fatal(err)
	}
	check(false, "DDL webhook.tables (schema "+schema+")")
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	run := exec.CommandContext(rctx, binary(t), "run", "-c", h.cfg)
	run.Env = append(os.Environ(), "HUB_ADMIN_TOKEN=")
	out, err := run.CombinedOutput()
	if run.ProcessState == nil {
		t.Fatalf("hub run: %v", err)
	}
	if code := run.ProcessState.ExitCode(); code != 3 || !strings.Contains(string(out), "webhook.tables") ||
		!strings.Contains(string(out), "hub migrate schema") {
		t.Fatalf("start on a schema behind the version: exit %d; want 3 and a message naming the set and `hub migrate schema`:\n%s", code, out)
	}
	migrate("DDL webhook.tables")
	check(false)
	if code := startHub(t, h.cfg, h.admin).stop(); code != 0 {
		t.Fatalf("exit code after SIGTERM = %d, want 0", code)
	}
}
