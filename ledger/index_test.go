package ledger_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/schemaver"
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
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		t.Fatal(err)
	}
	return err == nil, valid, unique
}

// withLogs returns cfg logging into logs from Info up.
func withLogs(cfg ledger.Config, logs *testenv.LogBuffer) ledger.Config {
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return cfg
}

// onLargeTable opens a ledger (owner) whose river_job holds enough rows for
// EnsureIndexes to build concurrently, and a second one on the same schema logging
// into logs from Info up.
func onLargeTable(t *testing.T) (owner, l *ledger.Ledger, logs *testenv.LogBuffer) {
	t.Helper()
	owner = ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	fillRiverJob(t, owner)
	logs = &testenv.LogBuffer{}
	return owner, loggedLedger(t, owner.Config(), logs), logs
}

func loggedLedger(t *testing.T, cfg ledger.Config, logs *testenv.LogBuffer) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Open(context.Background(), withLogs(cfg, logs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// An index added to a large river_job (a rolling upgrade) is built in the background
// while writers keep writing: EnsureIndexes returns at once (the starting process does
// not wait for the build), a transaction that was open on the table when the build
// began holds the build back, and inserts that come after it go through (a CREATE INDEX
// in a transaction would queue them behind its lock until the open transaction ended
// and the build finished).
func TestEnsureIndexesBuildsWithoutHoldingWriters(t *testing.T) {
	ctx := context.Background()
	owner, l, logs := onLargeTable(t)
	open, insert := openWriter(t, owner)
	defer func() { _ = open.Rollback(ctx) }()

	start, cancel := context.WithTimeout(ctx, 20*time.Second) // a build in the foreground would wait for the open transaction
	defer cancel()
	if err := l.EnsureIndexes(start, testIndex); err != nil {
		t.Fatalf("EnsureIndexes with a transaction open on the table: %v", err)
	}
	if _, valid, _ := indexState(t, owner, testIndex.Name); valid {
		t.Fatal("the index is valid while a transaction on the table is still open: it was not built concurrently")
	}
	waitForBuildWaiting(t, owner, logs)

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
	waitForValidIndex(t, owner, testIndex.Name)
	testenv.WaitFor(t, 30*time.Second, "the build's end logged", func() bool { return strings.Contains(logs.String(), "index built") })
	if got := logs.String(); !strings.Contains(got, "building an index concurrently") {
		t.Fatalf("the build's start is not logged; logs:\n%s", got)
	}
}

// openWriter opens a transaction that has inserted into l's river_job and keeps it
// open, and returns it with the insert (for another writer to run).
func openWriter(t *testing.T, l *ledger.Ledger) (pgx.Tx, string) {
	t.Helper()
	ctx := context.Background()
	open, err := l.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	insert := `INSERT INTO ` + l.Table("river_job") + ` (kind, max_attempts, args) VALUES ('lt_writer', 1, '{}')`
	if _, err := open.Exec(ctx, insert); err != nil {
		t.Fatal(err)
	}
	return open, insert
}

// waitForBuildWaiting waits until the concurrent build of testIndex waits for a lock
// (the transactions open on the table).
func waitForBuildWaiting(t *testing.T, l *ledger.Ledger, logs *testenv.LogBuffer) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, "the concurrent build waiting for the open transaction", func() bool {
		var waiting bool
		if err := l.Pool().QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE query LIKE 'CREATE INDEX CONCURRENTLY%lt_test_kind%' AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if !waiting && strings.Contains(logs.String(), "index built") {
			t.Fatalf("built without waiting for the open transaction; logs:\n%s", logs.String())
		}
		return waiting
	})
}

func waitForValidIndex(t *testing.T, l *ledger.Ledger, name string) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, "index "+name+" valid", func() bool {
		_, valid, _ := indexState(t, l, name)
		return valid
	})
}

// A process stopped during a build cancels it (Close does not wait for a build that
// may take minutes), which leaves an invalid index of the name; the next start drops
// it and builds it again. The same holds for a process killed mid-build.
func TestEnsureIndexesRebuildsWhatACancelledBuildLeft(t *testing.T) {
	ctx := context.Background()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	fillRiverJob(t, owner)
	var logs testenv.LogBuffer
	first, err := ledger.Open(ctx, withLogs(owner.Config(), &logs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Close() })
	open, _ := openWriter(t, owner)
	t.Cleanup(func() { _ = open.Rollback(context.Background()) })
	if err := first.EnsureIndexes(ctx, testIndex); err != nil {
		t.Fatal(err)
	}
	waitForBuildWaiting(t, owner, &logs)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// The server ends the cancelled build when it gets the cancel request and sees the
	// session gone, which can come after Close returned: committing before that would
	// let the build finish.
	testenv.WaitFor(t, 30*time.Second, "the cancelled build's session gone", func() bool {
		var running bool
		if err := owner.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE query LIKE 'CREATE INDEX CONCURRENTLY%lt_test_kind%' AND pid <> pg_backend_pid())`).Scan(&running); err != nil {
			t.Fatal(err)
		}
		return !running
	})
	if err := open.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if exists, valid, _ := indexState(t, owner, testIndex.Name); !exists || valid {
		t.Fatalf("after the cancelled build: exists %v, valid %v; want an invalid index left behind", exists, valid)
	}
	if got := logs.String(); !strings.Contains(got, "index build stopped by Close") {
		t.Fatalf("the cancelled build is not logged; logs:\n%s", got)
	}

	next := loggedLedger(t, owner.Config(), &logs)
	if err := next.EnsureIndexes(ctx, testIndex); err != nil {
		t.Fatal(err)
	}
	waitForValidIndex(t, owner, testIndex.Name)
	if got := logs.String(); !strings.Contains(got, "dropping an invalid index") {
		t.Fatalf("the rebuild is not logged; logs:\n%s", got)
	}
}

// An invalid index of the name from any failed concurrent build (here a unique one
// over duplicates) is dropped and the index asked for built in its place.
func TestEnsureIndexesRebuildsAnInvalidIndex(t *testing.T) {
	ctx := context.Background()
	l := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	fillRiverJob(t, l)
	if _, err := l.Pool().Exec(ctx, `CREATE UNIQUE INDEX CONCURRENTLY lt_test_kind ON `+l.Table("river_job")+` (kind)`); err == nil {
		t.Fatal("the unique build over duplicates succeeded")
	}
	if exists, valid, _ := indexState(t, l, testIndex.Name); !exists || valid {
		t.Fatalf("set-up: exists %v, valid %v; want an invalid index left behind", exists, valid)
	}
	if err := l.EnsureIndexes(ctx, testIndex); err != nil {
		t.Fatal(err)
	}
	waitForValidIndex(t, l, testIndex.Name)
	if _, _, unique := indexState(t, l, testIndex.Name); unique {
		t.Fatal("the invalid unique index was kept; want the index asked for")
	}
}

// Two indexes missing on one large table are built one after the other: two
// concurrent builds on one table deadlock (the second waits for the table's lock
// holding a snapshot, the first's last phase waits for that snapshot), which a
// transaction open when both begin makes certain.
func TestEnsureIndexesTwoOnOneTable(t *testing.T) {
	ctx := context.Background()
	owner, l, logs := onLargeTable(t)
	open, _ := openWriter(t, owner)
	defer func() { _ = open.Rollback(ctx) }()
	second := ledger.Index{Name: "lt_test_queue", Table: "river_job", Def: "(queue, id)"}
	if err := l.EnsureIndexes(ctx, testIndex, second); err != nil {
		t.Fatal(err)
	}
	waitForBuildWaiting(t, owner, logs)
	if err := open.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	waitForValidIndex(t, owner, testIndex.Name)
	waitForValidIndex(t, owner, second.Name)
	if got := logs.String(); strings.Contains(got, "deadlock") || strings.Contains(got, "not built") {
		t.Fatalf("the builds overlapped; logs:\n%s", got)
	}
}

// Replicas starting together on a large table build the index once.
func TestEnsureIndexesFromTwoProcessesAtOnce(t *testing.T) {
	ctx := context.Background()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	fillRiverJob(t, owner)
	var logs [2]testenv.LogBuffer
	ls := []*ledger.Ledger{loggedLedger(t, owner.Config(), &logs[0]), loggedLedger(t, owner.Config(), &logs[1])}
	var wg sync.WaitGroup
	errs := make([]error, len(ls))
	for i, l := range ls {
		wg.Go(func() { errs[i] = l.EnsureIndexes(ctx, testIndex) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	waitForValidIndex(t, owner, testIndex.Name)
	for _, l := range ls {
		if err := l.Close(); err != nil { // waits for its build, or its wait for the other's
			t.Fatal(err)
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
	testenv.WaitFor(t, 30*time.Second, "the background build's refusal logged", func() bool {
		return strings.Count(logs.String(), "index not built") == 2
	})
	if got := logs.String(); !strings.Contains(got, "lt_test_missing") {
		t.Fatalf("the warnings do not name the missing index; logs:\n%s", got)
	}
	if exists, _, _ := indexState(t, owner, missing.Name); exists {
		t.Fatal("the role built an index on a table it does not own")
	}
	// A migration run (`hub migrate schema`) must leave every index built: it builds in
	// the foreground, and the same refusal fails it.
	err := l.EnsureIndexes(schemaver.AsMigration(ctx, false), missing)
	if hub.Code(err) != hub.FailedPrecondition || !strings.Contains(err.Error(), "lt_test_missing") {
		t.Fatalf("EnsureIndexes in a migration run, an index the role may not build: %v; want FailedPrecondition naming the index", err)
	}
}

// In a migration run EnsureIndexes builds a large table's index before it returns and
// reports a build that failed (here every row divides by zero); a start's runs in the
// background and only logs it.
func TestEnsureIndexesInAMigrationRun(t *testing.T) {
	ctx := context.Background()
	_, l, logs := onLargeTable(t)
	failing := ledger.Index{Name: "lt_test_fails", Table: "river_job", Def: "((1 / (id - id)))"}
	if err := l.EnsureIndexes(ctx, failing); err != nil {
		t.Fatalf("EnsureIndexes at a start returns before the build: %v", err)
	}
	testenv.WaitFor(t, 30*time.Second, "the failed background build logged", func() bool {
		return strings.Contains(logs.String(), "index not built")
	})
	mctx := schemaver.AsMigration(ctx, false)
	if err := l.EnsureIndexes(mctx, failing); err == nil || !strings.Contains(err.Error(), "lt_test_fails") {
		t.Fatalf("EnsureIndexes in a migration run, a build that fails: %v; want its error, naming the index", err)
	}
	if err := l.EnsureIndexes(mctx, testIndex); err != nil {
		t.Fatal(err)
	}
	if _, valid, _ := indexState(t, l, testIndex.Name); !valid {
		t.Fatal("EnsureIndexes in a migration run returned before its index was built")
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
