package ledger_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/hub"
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
// DDL again (the table dropped behind its back stays dropped, and its backfill does not
// run); a changed set runs, with its backfill, which is not part of the set's identity.
func TestApplySchemaRunsEachVersionOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	tbl := l.Table("schema_once")
	v1 := []string{`CREATE TABLE IF NOT EXISTS ` + tbl + ` (id BIGINT PRIMARY KEY)`}
	if err := l.ApplySchema(ctx, "test.once", v1, `INSERT INTO `+tbl+` VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Pool().Exec(ctx, `DROP TABLE `+tbl); err != nil {
		t.Fatal(err)
	}
	if err := l.ApplySchema(ctx, "test.once", v1, `INSERT INTO `+tbl+` VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	if regclass(t, l, tbl) {
		t.Fatal("the recorded set ran again: the table dropped after it was applied exists")
	}
	v2 := append(slices.Clone(v1), `CREATE INDEX IF NOT EXISTS schema_once_id ON `+tbl+` (id)`)
	if err := l.ApplySchema(ctx, "test.once", v2, `INSERT INTO `+tbl+` VALUES (3)`); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	rows, err := l.Pool().Query(ctx, `SELECT id FROM `+tbl+` ORDER BY id`)
	if err != nil {
		t.Fatalf("the changed set did not run: %v", err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if rows.Err() != nil || !slices.Equal(ids, []int64{3}) {
		t.Fatalf("rows %v (%v); want [3]: the changed set's backfill, once", ids, rows.Err())
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
// river_job (every REINDEX would fail with an error logged per index).
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
}
