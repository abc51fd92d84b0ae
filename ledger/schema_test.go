package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestApplySchemaRunsEachVersionOnce: a set of statements recorded as applied runs no
// DDL again (a table dropped behind its back stays dropped), not even when an earlier
// version's set comes after a later one's (a replica of the previous version
// restarting during a rolling upgrade or after a rollback); a set given a backfill
// (its caller found the objects missing) runs, and so does a changed set, and every
// set under a forced migration.
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
	apply := func(ctx context.Context, stmts []string, backfill ...string) {
		t.Helper()
		if err := l.ApplySchema(ctx, "test.once", stmts, backfill...); err != nil {
			t.Fatal(err)
		}
	}
	v1 := []string{`CREATE TABLE IF NOT EXISTS ` + tbl + ` (id BIGINT PRIMARY KEY)`}
	v2 := append(slices.Clone(v1), `CREATE INDEX IF NOT EXISTS schema_once_id ON `+tbl+` (id)`)

	apply(ctx, v1)
	if !regclass(t, l, tbl) {
		t.Fatal("the first ApplySchema did not create the table")
	}
	drop()
	apply(ctx, v1)
	if regclass(t, l, tbl) {
		t.Fatal("the recorded set ran again: the table dropped after it was applied exists")
	}
	apply(ctx, v1, `INSERT INTO `+tbl+` VALUES (2)`)
	var n int
	if err := l.Pool().QueryRow(ctx, `SELECT count(*) FROM `+tbl+` WHERE id = 2`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("a set with a backfill: %d backfilled rows (%v); want it run, once", n, err)
	}
	apply(ctx, v2)
	if !regclass(t, l, l.Table("schema_once_id")) {
		t.Fatal("the changed set did not run")
	}
	drop()
	apply(ctx, v1)
	if regclass(t, l, tbl) {
		t.Fatal("the earlier version's set ran after the later one's: its own record was lost")
	}
	apply(schemaver.AsMigration(ctx, true), v2)
	if !regclass(t, l, tbl) || !regclass(t, l, l.Table("schema_once_id")) {
		t.Fatal("a forced migration did not run the recorded set")
	}
}

// A process that meets another one's migration in progress (`hub migrate schema` as
// the owner while a replica starts as a role that may not run DDL) waits for it and
// finds the set recorded once it committed: it reads the record again under the lock.
func TestApplySchemaWaitsForAMigrationInProgress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	if err := owner.ApplySchema(ctx, "test.first", []string{`CREATE TABLE IF NOT EXISTS ` + owner.Table("schema_first") + ` (id BIGINT)`}); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(ctx, nonOwnerConfig(t, owner))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tbl := owner.Table("schema_wait")
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS ` + tbl + ` (id BIGINT PRIMARY KEY, v TEXT)`,
		`CREATE INDEX IF NOT EXISTS schema_wait_v ON ` + tbl + ` (v)`,
	}
	// The owner's migration, held open: the DDL lock, the statements, the record.
	tx, err := owner.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, q := range append([]string{schemaver.Lock}, stmts...) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO eventhub_schema (name, digest, applied_at) VALUES ($1, $2, 0)`,
		"test.wait", schemaver.Digest(stmts)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.ApplySchema(ctx, "test.wait", stmts) }()
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
			errs[i] = l.ApplySchema(ctx, "test."+set, []string{
				`CREATE TABLE IF NOT EXISTS ` + l.Table(set) + ` (id BIGINT PRIMARY KEY, v TEXT)`,
				`CREATE INDEX IF NOT EXISTS ` + set + `_v ON ` + l.Table(set) + ` (v)`,
			})
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
	if err := owner.ApplySchema(ctx, "test.role", stmts); err != nil {
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
	if err := l.ApplySchema(ctx, "test.role", stmts); err != nil {
		t.Fatalf("ApplySchema of a recorded set as a role that owns nothing: %v", err)
	}
	changed := append(slices.Clone(stmts), `CREATE INDEX IF NOT EXISTS schema_role_v_id ON `+tbl+` (v, id)`)
	err = l.ApplySchema(ctx, "test.role", changed)
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
