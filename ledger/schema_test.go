package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/schemaver"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// regclass reports whether the table exists, as l's owner sees it.
func regclass(t *testing.T, l *ledger.Ledger, table string) bool {
	t.Helper()
	var exists bool
	if err := l.Pool().QueryRow(context.Background(), `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

// notExists is a Missing query: whether the table is not in the current schema.
func notExists(table string) string {
	return `SELECT NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class WHERE relname = '` + table +
		`' AND relnamespace = current_schema()::regnamespace)`
}

// TestApplySchemaRunsEachVersionOnce: a set of statements recorded as applied runs no
// DDL again (a table dropped behind its back stays dropped), not even when an earlier
// version's set comes after a later one's (a replica of the previous version
// restarting during a rolling upgrade or after a rollback); a set whose Missing finds
// its table missing runs, with its backfill, and so does a changed set, and every set
// in a forced migration.
func TestApplySchemaRunsEachVersionOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	tbl := l.Table("schema_once")
	drop := func() {
		t.Helper()
		if _, err := l.Pool().Exec(ctx, `DROP TABLE IF EXISTS `+tbl); err != nil {
			t.Fatal(err)
		}
	}
	apply := func(ctx context.Context, s ledger.Schema) {
		t.Helper()
		s.Name = "test.once"
		if err := l.ApplySchema(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() []int64 {
		t.Helper()
		rows, err := l.Pool().Query(ctx, `SELECT id FROM `+tbl+` ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	v1 := []string{`CREATE TABLE IF NOT EXISTS ` + tbl + ` (id BIGINT PRIMARY KEY)`}
	v2 := append(slices.Clone(v1), `CREATE INDEX IF NOT EXISTS schema_once_id ON `+tbl+` (id)`)

	apply(ctx, ledger.Schema{Statements: v1})
	if !regclass(t, l, tbl) {
		t.Fatal("the first ApplySchema did not create the table")
	}
	drop()
	apply(ctx, ledger.Schema{Statements: v1})
	if regclass(t, l, tbl) {
		t.Fatal("the recorded set ran again: the table dropped after it was applied exists")
	}
	backfill := func(id int) ledger.Schema {
		return ledger.Schema{Statements: v1, Missing: notExists("schema_once"),
			Backfill: []string{fmt.Sprintf(`INSERT INTO %s VALUES (%d)`, tbl, id)}}
	}
	apply(ctx, backfill(2))
	if got := ids(); !slices.Equal(got, []int64{2}) {
		t.Fatalf("rows %v after a set whose table was missing; want [2]: made and backfilled", got)
	}
	apply(ctx, backfill(3))
	if got := ids(); !slices.Equal(got, []int64{2}) {
		t.Fatalf("rows %v after the same set, its table there; want [2]: no backfill", got)
	}
	apply(ctx, ledger.Schema{Statements: v2})
	if !regclass(t, l, l.Table("schema_once_id")) {
		t.Fatal("the changed set did not run")
	}
	drop()
	apply(ctx, ledger.Schema{Statements: v1})
	if regclass(t, l, tbl) {
		t.Fatal("the earlier version's set ran after the later one's: its own record was lost")
	}
	apply(schemaver.AsMigration(ctx, true), ledger.Schema{Statements: v2})
	if !regclass(t, l, tbl) || !regclass(t, l, l.Table("schema_once_id")) {
		t.Fatal("a forced migration did not run the recorded set")
	}
}

// A process that meets another one's migration in progress (`hub migrate schema` as
// the owner of an empty schema while a replica starts as a role that may not run DDL)
// waits for it and, asking again under the lock, finds the table made and the set
// recorded: neither the record table's absence before the wait nor the table the set
// found missing (whose backfill it would run) sends it into the DDL.
func TestApplySchemaWaitsForAMigrationInProgress(t *testing.T) {
	for _, missing := range []bool{false, true} {
		t.Run(fmt.Sprintf("missing=%v", missing), func(t *testing.T) { waitsForAMigration(t, missing) })
	}
}

// waitsForAMigration is the test on an empty schema, with a set that asks whether its
// table is missing (and would backfill it) or not.
func waitsForAMigration(t *testing.T, withMissing bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	cfg := nonOwnerConfig(t, owner)
	u, err := url.Parse(cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	// The tables the owner makes from now on are the role's to read and write.
	if _, err := owner.Pool().Exec(ctx, `ALTER DEFAULT PRIVILEGES IN SCHEMA `+owner.Config().Schema+
		` GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO `+u.User.Username()); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tbl := owner.Table("schema_wait")
	set := ledger.Schema{Name: "test.wait",
		Statements: []string{
			`CREATE TABLE IF NOT EXISTS ` + tbl + ` (id BIGINT PRIMARY KEY, v TEXT)`,
			`CREATE INDEX IF NOT EXISTS schema_wait_v ON ` + tbl + ` (v)`,
		},
	}
	if withMissing {
		set.Missing = notExists("schema_wait")
		set.Backfill = []string{`INSERT INTO ` + tbl + ` VALUES (1, 'backfilled')`}
	}
	// The owner's migration, held open: the DDL lock, the statements, the record.
	tx, err := owner.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, q := range append(append([]string{schemaver.Lock}, set.Statements...),
		`CREATE TABLE eventhub_schema (name TEXT NOT NULL, digest TEXT NOT NULL, applied_at BIGINT NOT NULL, PRIMARY KEY (name, digest))`,
		`INSERT INTO eventhub_schema (name, digest, applied_at) VALUES ('test.wait', '`+schemaver.Digest(set.Statements)+`', 0)`,
	) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- l.ApplySchema(ctx, set) }()
	testenv.WaitFor(t, 30*time.Second, "the role's ApplySchema waiting for the DDL lock", func() bool {
		var waiting int
		_ = owner.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting)
		return waiting > 0
	})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("ApplySchema after the migration it waited for: %v; want nil (the set is recorded)", err)
	}
}

// Replicas starting at once on an empty schema, several sets each (the record table
// made by whichever comes first), all start.
func TestApplySchemaConcurrent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			set := fmt.Sprintf("schema_c%d", i%3)
			errs[i] = l.ApplySchema(ctx, ledger.Schema{Name: "test." + set, Statements: []string{
				`CREATE TABLE IF NOT EXISTS ` + l.Table(set) + ` (id BIGINT PRIMARY KEY, v TEXT)`,
				`CREATE INDEX IF NOT EXISTS ` + set + `_v ON ` + l.Table(set) + ` (v)`,
			}})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestApplySchemaAsARoleWithoutDDL: a role that owns none of the tables starts on a set
// its owner applied (where running the same idempotent DDL fails: PostgreSQL checks
// ownership before existence), and a set not applied yet fails with FailedPrecondition,
// saying what to run.
func TestApplySchemaAsARoleWithoutDDL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	tbl := owner.Table("schema_role")
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS ` + tbl + ` (id BIGINT PRIMARY KEY, v TEXT)`,
		`CREATE INDEX IF NOT EXISTS schema_role_v ON ` + tbl + ` (v)`,
	}
	if err := owner.ApplySchema(ctx, ledger.Schema{Name: "test.role", Statements: stmts}); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(ctx, nonOwnerConfig(t, owner))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.CreateTables(ctx, stmts...); err == nil {
		t.Fatal("CreateTables ran CREATE INDEX IF NOT EXISTS on another role's table: the role owns it after all, and the test shows nothing")
	}
	if err := l.ApplySchema(ctx, ledger.Schema{Name: "test.role", Statements: stmts}); err != nil {
		t.Fatalf("ApplySchema of a recorded set as a role that owns nothing: %v", err)
	}
	changed := append(slices.Clone(stmts), `CREATE INDEX IF NOT EXISTS schema_role_v_id ON `+tbl+` (v, id)`)
	err = l.ApplySchema(ctx, ledger.Schema{Name: "test.role", Statements: changed})
	if hub.Code(err) != hub.FailedPrecondition || !strings.Contains(err.Error(), "hub migrate schema") {
		t.Fatalf("ApplySchema of a new set as a role that may not run it: %v (code %v); want FailedPrecondition naming `hub migrate schema`",
			err, hub.Code(err))
	}
}

// River's daily reindexer is given its default indexes but the GIN ones Open drops
// (it would report them missing at every run), and none when the role does not own
// river_job (every REINDEX would fail with an error logged per index), nor on SQLite
// (a REINDEX would hold the file's write lock; River's default names indexes its
// SQLite tables lack).
func TestRiverReindexesWhatTheRoleMay(t *testing.T) {
	ctx := context.Background()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	got := ledger.ReindexIndexes(owner)
	for _, gone := range ledger.UnusedRiverIndexes {
		if slices.Contains(got, gone) {
			t.Errorf("reindexer list %v names %s, which Open drops", got, gone)
		}
	}
	if len(got) != len(river.ReindexerIndexNamesDefault())-len(ledger.UnusedRiverIndexes) {
		t.Errorf("reindexer list %v; want River's default %v without %v", got, river.ReindexerIndexNamesDefault(), ledger.UnusedRiverIndexes)
	}
	l, err := ledger.Open(ctx, nonOwnerConfig(t, owner))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := ledger.ReindexIndexes(l); got == nil || len(got) != 0 {
		t.Errorf("reindexer list of a role that does not own river_job: %#v; want empty, not nil (nil is River's default)", got)
	}
	lite := ledgertest.Open(t, ledger.SQLite, ledger.Config{})
	if got := ledger.ReindexIndexes(lite); got == nil || len(got) != 0 {
		t.Errorf("reindexer list on SQLite: %#v; want empty, not nil (nil is River's default)", got)
	}
}

// Open in a check run (`hub migrate schema --check`) reports River's GIN index that a
// start would drop, and drops nothing.
func TestOpenInACheckRun(t *testing.T) {
	ctx := context.Background()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	if _, err := owner.Pool().Exec(ctx, `CREATE INDEX river_job_args_index ON `+owner.Table("river_job")+` USING GIN(args)`); err != nil {
		t.Fatal(err)
	}
	var p schemaver.Pending
	l, err := ledger.Open(schemaver.AsCheck(ctx, &p), owner.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := strings.Join(p.Items(), "\n"); !strings.Contains(got, "river_job_args_index") || strings.Contains(got, "River's migrations") {
		t.Fatalf("pending after a check run's Open: %q; want River's GIN index (to drop) and no migration", got)
	}
	if !regclass(t, owner, owner.Table("river_job_args_index")) {
		t.Fatal("a check run dropped River's GIN index")
	}
}
