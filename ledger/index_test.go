package ledger_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// testIndex is the index these tests ask for, on a column every river_job row has.
var testIndex = ledger.Index{Name: "lt_test_kind", Table: "river_job", Def: "(kind, id)"}

// fillRiverJob gives river_job more rows than EnsureIndexes builds an index on in a
// transaction, so that it takes the concurrent path an upgrade of a busy database
// takes.
func fillRiverJob(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	if _, err := l.Pool().Exec(context.Background(), `INSERT INTO `+l.Table("river_job")+
		` (kind, max_attempts, args, state, finalized_at)
		SELECT 'lt_fill', 1, '{}', 'completed', now() FROM generate_series(1, 12000)`); err != nil {
		t.Fatal(err)
	}
}

// indexState reads whether the index exists, is valid and is unique.
func indexState(t *testing.T, l *ledger.Ledger, name string) (exists, valid, unique bool) {
	t.Helper()
	err := l.Pool().QueryRow(context.Background(), `SELECT indisvalid, indisunique FROM pg_index WHERE indexrelid = to_regclass($1)`,
		l.Table(name)).Scan(&valid, &unique)
	if err != nil && !strings.Contains(err.Error(), "no rows") {
		t.Fatal(err)
	}
	return err == nil, valid, unique
}

func loggedLedger(t *testing.T, cfg ledger.Config, logs *testenv.LogBuffer) *ledger.Ledger {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	l, err := ledger.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// An index added to a large river_job (a rolling upgrade) is built while other
// writers keep writing: a transaction that was open on the table when the build began
// holds the build back, not the inserts that come after it (a CREATE INDEX in a
// transaction would queue them behind its lock until the open transaction ended and
// the build finished).
func TestEnsureIndexesBuildsWithoutHoldingWriters(t *testing.T) {
	ctx := context.Background()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	fillRiverJob(t, owner)
	var logs testenv.LogBuffer
	l := loggedLedger(t, owner.Config(), &logs)

	open, err := owner.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = open.Rollback(ctx) }()
	insert := `INSERT INTO ` + owner.Table("river_job") + ` (kind, max_attempts, args) VALUES ('lt_writer', 1, '{}')`
	if _, err := open.Exec(ctx, insert); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { done <- l.EnsureIndexes(ctx, testIndex) }()
	// Wait until the build waits for the open transaction.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting bool
		if err := owner.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE query LIKE 'CREATE INDEX CONCURRENTLY%lt_test_kind%' AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("EnsureIndexes returned (%v) while a transaction on the table was open: it did not build concurrently", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the build never waited for the open transaction; logs:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Another writer inserts meanwhile, within a statement timeout.
	conn, err := owner.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SET statement_timeout = '5s'`); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, insert)
	_, _ = conn.Exec(ctx, `RESET statement_timeout`)
	conn.Release()
	if err != nil {
		t.Fatalf("an insert while the index was being built: %v", err)
	}

	if err := open.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("EnsureIndexes did not return once the open transaction ended")
	}
	if exists, valid, _ := indexState(t, owner, testIndex.Name); !exists || !valid {
		t.Fatalf("index: exists %v, valid %v; want a valid index", exists, valid)
	}
	if got := logs.String(); !strings.Contains(got, "building an index concurrently") || !strings.Contains(got, "index built") {
		t.Fatalf("the build is not logged; logs:\n%s", got)
	}
}

// A concurrent build that failed leaves an invalid index of the name, which no query
// reads and which IF NOT EXISTS would take for the index: EnsureIndexes drops and
// builds it again.
func TestEnsureIndexesRebuildsAnInvalidIndex(t *testing.T) {
	ctx := context.Background()
	l := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	fillRiverJob(t, l)
	// A unique build over duplicate kinds fails and leaves the index invalid.
	if _, err := l.Pool().Exec(ctx, `CREATE UNIQUE INDEX CONCURRENTLY lt_test_kind ON `+l.Table("river_job")+` (kind)`); err == nil {
		t.Fatal("the unique build over duplicates succeeded")
	}
	if exists, valid, _ := indexState(t, l, testIndex.Name); !exists || valid {
		t.Fatalf("set-up: exists %v, valid %v; want an invalid index left behind", exists, valid)
	}
	if err := l.EnsureIndexes(ctx, testIndex); err != nil {
		t.Fatal(err)
	}
	if exists, valid, unique := indexState(t, l, testIndex.Name); !exists || !valid || unique {
		t.Fatalf("index: exists %v, valid %v, unique %v; want the index asked for, valid", exists, valid, unique)
	}
}

// Replicas starting together on a large table build the index once, and each returns
// only once it is there.
func TestEnsureIndexesFromTwoProcessesAtOnce(t *testing.T) {
	ctx := context.Background()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	fillRiverJob(t, owner)
	var logs [2]testenv.LogBuffer
	ls := []*ledger.Ledger{loggedLedger(t, owner.Config(), &logs[0]), loggedLedger(t, owner.Config(), &logs[1])}
	var wg sync.WaitGroup
	errs := make([]error, len(ls))
	for i, l := range ls {
		wg.Go(func() {
			errs[i] = l.EnsureIndexes(ctx, testIndex)
			if exists, valid, _ := indexState(t, owner, testIndex.Name); !exists || !valid {
				t.Errorf("process %d returned before the index was valid (exists %v, valid %v)", i, exists, valid)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	built := strings.Count(logs[0].String()+logs[1].String(), "index built")
	if built != 1 {
		t.Fatalf("built %d times; want once. logs:\n%s\n%s", built, logs[0].String(), logs[1].String())
	}
}

// A role that does not own river_job (the tables belong to a migration role) starts
// when the index exists, running no DDL, and is warned, not failed, when it is missing.
func TestEnsureIndexesAsARoleThatMayNotBuild(t *testing.T) {
	ctx := context.Background()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	cfg := nonOwnerConfig(t, owner)
	var logs testenv.LogBuffer
	l := loggedLedger(t, cfg, &logs)

	if err := owner.EnsureIndexes(ctx, testIndex); err != nil {
		t.Fatal(err)
	}
	if err := l.EnsureIndexes(ctx, testIndex); err != nil {
		t.Fatalf("the index exists: %v", err)
	}
	missing := ledger.Index{Name: "lt_test_missing", Table: "river_job", Def: "(queue, id)"}
	if err := l.EnsureIndexes(ctx, missing); err != nil {
		t.Fatalf("a missing index the role may not build, small table: %v", err)
	}
	fillRiverJob(t, owner)
	if err := l.EnsureIndexes(ctx, missing); err != nil {
		t.Fatalf("a missing index the role may not build, large table: %v", err)
	}
	if got := logs.String(); strings.Count(got, "index not built") != 2 || !strings.Contains(got, "lt_test_missing") {
		t.Fatalf("want two warnings naming the missing index; logs:\n%s", got)
	}
	if exists, _, _ := indexState(t, owner, missing.Name); exists {
		t.Fatal("the role built an index on a table it does not own")
	}
}

// On SQLite the index is created as it is (one writer: the hub), and asked for again
// it is left alone.
func TestEnsureIndexesSQLite(t *testing.T) {
	ctx := context.Background()
	l := ledgertest.Open(t, ledger.SQLite, ledger.Config{})
	for range 2 {
		if err := l.EnsureIndexes(ctx, testIndex); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := l.DB().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, testIndex.Name).Scan(&n); err != nil || n != 1 {
		t.Fatalf("index %s: %d, %v", testIndex.Name, n, err)
	}
}
