package schemaver_test

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/schemaver"
	"github.com/koder/eventhub/internal/testenv"
)

func TestDigestSeparatesStatements(t *testing.T) {
	if schemaver.Digest([]string{"ab", "c"}) == schemaver.Digest([]string{"a", "bc"}) {
		t.Fatal("two different sets of statements with the same text joined share a digest")
	}
	set := []string{"CREATE TABLE t (id BIGINT)"}
	if a, b := schemaver.Digest(set), schemaver.Digest([]string{"CREATE TABLE t (id BIGINT)"}); a != b {
		t.Fatalf("one set's digest differs between calls: %s, %s", a, b)
	}
}

// exists reports whether table is in db (SQLite or PostgreSQL's search_path).
func exists(t *testing.T, db *sql.DB, pg bool, table string) bool {
	t.Helper()
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = $1`
	if pg {
		q = `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1`
	}
	var n int
	if err := db.QueryRow(q, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// On PostgreSQL a recorded set runs no DDL again (the auth tables' and kdbstream's
// path: database/sql over pgx); on SQLite, which has no roles, every Apply runs it, as
// the hub always did.
func TestApplyRecordsOnPostgresOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stmts := []string{`CREATE TABLE IF NOT EXISTS sv_t (id BIGINT PRIMARY KEY)`}

	lite, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "sv.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()

	pg := pgSchema(t, ctx)
	for _, c := range []struct {
		name     string
		db       *sql.DB
		pg       bool
		recreate bool // whether the second Apply creates the dropped table again
	}{{"sqlite", lite, false, true}, {"postgres", pg, true, false}} {
		t.Run(c.name, func(t *testing.T) {
			if err := schemaver.Apply(ctx, c.db, schemaver.Set{Name: "test.sv", Statements: stmts}); err != nil {
				t.Fatal(err)
			}
			if !exists(t, c.db, c.pg, "sv_t") {
				t.Fatal("the first Apply did not create the table")
			}
			if _, err := c.db.ExecContext(ctx, `DROP TABLE sv_t`); err != nil {
				t.Fatal(err)
			}
			if err := schemaver.Apply(ctx, c.db, schemaver.Set{Name: "test.sv", Statements: stmts}); err != nil {
				t.Fatal(err)
			}
			if got := exists(t, c.db, c.pg, "sv_t"); got != c.recreate {
				t.Fatalf("table after a second Apply of the same set: %v; want %v", got, c.recreate)
			}
		})
	}
}

// pgSchema returns a database/sql pool on pgx whose search_path is a schema of its
// own, dropped at the end of the test.
func pgSchema(t *testing.T, ctx context.Context) *sql.DB {
	t.Helper()
	pgURL := testenv.PostgresURL(t)
	name := testenv.Name(t)
	schema := "sv_" + name[len(name)-26:] // the ULID: unique, within PostgreSQL's limits
	boot, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = boot.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		_ = boot.Close(context.Background())
	})
	if _, err := boot.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	cc, err := pgx.ParseConfig(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	cc.RuntimeParams["search_path"] = schema
	db := stdlib.OpenDB(*cc)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// A check run (`hub migrate schema --check`) runs no DDL and reports a set whose
// version is not recorded; once applied, nothing.
func TestCheckRunsNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := pgSchema(t, ctx)
	set := schemaver.Set{Name: "test.check", Statements: []string{`CREATE TABLE IF NOT EXISTS sv_c (id BIGINT)`}}
	var p schemaver.Pending
	if err := schemaver.Apply(schemaver.AsCheck(ctx, &p), db, set); err != nil {
		t.Fatal(err)
	}
	if exists(t, db, true, "sv_c") || exists(t, db, true, "eventhub_schema") ||
		len(p.Items()) != 1 || !strings.HasPrefix(p.Items()[0], "DDL test.check (schema sv_") {
		t.Fatalf("check on an empty schema: table made %v, pending %v; want nothing made and the set pending, with its schema",
			exists(t, db, true, "sv_c"), p.Items())
	}
	if err := schemaver.Apply(ctx, db, set); err != nil {
		t.Fatal(err)
	}
	var again schemaver.Pending
	if err := schemaver.Apply(schemaver.AsCheck(ctx, &again), db, set); err != nil || len(again.Items()) != 0 {
		t.Fatalf("check after the set was applied: %v, pending %v; want nothing", err, again.Items())
	}
}

// A check run on a schema the role may not use fails saying so (a migration would not
// mend it); on a schema that does not exist yet the set is pending.
func TestCheckOnASchemaItMayNotUse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pgURL := testenv.PostgresURL(t)
	name := testenv.Name(t)
	schema, role := "sv_"+name[len(name)-26:], "sv_role_"+name[len(name)-26:]
	boot, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = boot.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		_, _ = boot.Exec(context.Background(), "DROP ROLE IF EXISTS "+role)
		_ = boot.Close(context.Background())
	})
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	cc, err := pgx.ParseConfig(u.String())
	if err != nil {
		t.Fatal(err)
	}
	cc.RuntimeParams["search_path"] = schema
	db := stdlib.OpenDB(*cc)
	defer db.Close()
	set := schemaver.Set{Name: "test.usage", Statements: []string{`CREATE TABLE IF NOT EXISTS sv_u (id BIGINT)`}}
	if _, err := boot.Exec(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	var p schemaver.Pending
	if err := schemaver.Apply(schemaver.AsCheck(ctx, &p), db, set); err != nil || len(p.Items()) != 1 {
		t.Fatalf("check on a schema not made yet: %v, pending %v; want the set pending", err, p.Items())
	}
	if _, err := boot.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	var q schemaver.Pending
	err = schemaver.Apply(schemaver.AsCheck(ctx, &q), db, set)
	if hub.Code(err) != hub.FailedPrecondition || !strings.Contains(err.Error(), "USAGE") {
		t.Fatalf("check on a schema the role may not use: %v, pending %v; want FailedPrecondition naming USAGE", err, q.Items())
	}
}
