package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/internal/testenv"
)

// TestTP_SQLiteBatchedCompletionMatchesRiver: the batched completion (sqlite_complete.go)
// leaves every row, and returns every job, exactly as riversqlite's per-job
// JobSetStateIfRunningMany does. Two databases get the same jobs (running or not, with
// metadata that is an object, an array, a string, invalid text or nested) and the same
// random batches of state changes (plain completions with and without metadata
// updates, updates json_patch would treat differently: nulls, objects, duplicate keys;
// retries with errors, snoozes, discards, cancels); one runs River's executor, the
// other the batched one, and the tables and results are compared.
func TestTP_SQLiteBatchedCompletionMatchesRiver(t *testing.T) {
	ctx := context.Background()
	riverDB, want, oursDB, ours := openPair(t)
	got := ours.GetExecutor()

	rng := rand.New(rand.NewPCG(18, 2))
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var nextID int64
	for round := range 40 {
		// Fresh jobs each round, most of them running.
		var ids []int64
		for range 1 + rng.IntN(60) {
			nextID++
			ids = append(ids, nextID)
			state := "running"
			if rng.IntN(8) == 0 {
				state = []string{"available", "completed", "cancelled", "retryable"}[rng.IntN(4)]
			}
			meta := storedMetadata[rng.IntN(len(storedMetadata))]
			for _, db := range []*sql.DB{riverDB, oursDB} {
				insertJob(t, db, nextID, state, meta, now)
			}
		}
		p := &riverdriver.JobSetStateIfRunningManyParams{Now: &now}
		for _, id := range ids {
			if rng.IntN(10) == 0 {
				continue // not in this batch
			}
			addChange(p, id, rng, now)
		}
		if len(p.ID) == 0 {
			continue
		}
		wantRows, err := want.JobSetStateIfRunningMany(ctx, p)
		if err != nil {
			t.Fatalf("round %d: River: %v", round, err)
		}
		gotRows, err := got.JobSetStateIfRunningMany(ctx, p)
		if err != nil {
			t.Fatalf("round %d: batched: %v", round, err)
		}
		if w, g := returned(wantRows), returned(gotRows); !slices.Equal(w, g) {
			for i := range min(len(w), len(g)) {
				if w[i] != g[i] {
					t.Fatalf("round %d: job returned\n  River:   %s\n  batched: %s", round, w[i], g[i])
				}
			}
			t.Fatalf("round %d: River returned %d jobs, batched %d", round, len(w), len(g))
		}
		if w, g := dumpJobs(t, riverDB, 0), dumpJobs(t, oursDB, 0); !slices.Equal(w, g) {
			for i := range min(len(w), len(g)) {
				if w[i] != g[i] {
					t.Fatalf("round %d: row differs\n  River:   %s\n  batched: %s", round, w[i], g[i])
				}
			}
			t.Fatalf("round %d: %d rows vs %d", round, len(w), len(g))
		}
	}
	if n := ours.batched.Load(); n < nextID/8 { // about a fifth are plain completions of running jobs
		t.Fatalf("%d of %d jobs went through the batched UPDATE: the test mostly compared River with itself", n, nextID)
	}
	t.Logf("%d jobs, %d completed by the batched UPDATE", nextID, ours.batched.Load())
}

// storedMetadata are metadata columns as a job may hold them (as JSONB when they are
// JSON, as text otherwise: insertJob).
var storedMetadata = []string{
	`{}`, `{}`, `{}`,
	`{"attempts":[{"attempt":1,"status":500}],"river:unique_nonce":"x"}`,
	`{"inflight_deferrals":2,"nested":{"a":1,"b":{"c":2}}}`,
	`{"keep":null}`,
	`[1,2]`,
	`"just a string"`,
	`not json at all`,
}

// metadataUpdates are what a worker's metadata changes may look like.
var metadataUpdates = []string{
	`{"attempts":[{"attempt":1,"at":"2026-12-02T10:00:00Z","status":204,"latency_ms":1.5}]}`,
	`{"attempts":[],"inflight_deferrals":3}`,
	`{"k":"v","n":2,"b":true,"weird \"key\".x":1}`,
	`{"keep":1}`,
	`{"gone":null}`,
	`{"nested":{"b":{"d":3}}}`,
	`{"dup":1,"dup":2}`,
	`{}`,
}

// addChange appends one random state change of job id to p.
func addChange(p *riverdriver.JobSetStateIfRunningManyParams, id int64, rng *rand.Rand, now time.Time) {
	var (
		state     = rivertype.JobStateCompleted
		attempt   *int
		errData   []byte
		finalized *time.Time
		scheduled *time.Time
		merge     = rng.IntN(4) != 0
		updates   []byte
	)
	if merge {
		updates = []byte(metadataUpdates[rng.IntN(len(metadataUpdates))])
	}
	at := now.Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
	finalized = &at
	switch rng.IntN(10) {
	case 0: // failed, retried later
		state, finalized = rivertype.JobStateRetryable, nil
		later := now.Add(time.Minute)
		scheduled = &later
		errData = []byte(`{"at":"2026-12-02T10:00:00Z","attempt":1,"error":"boom","trace":""}`)
	case 1: // failed for good
		state = rivertype.JobStateDiscarded
		errData = []byte(`{"at":"2026-12-02T10:00:00Z","attempt":6,"error":"boom","trace":""}`)
	case 2: // cancelled by its worker
		state = rivertype.JobStateCancelled
	case 3: // snoozed
		state, finalized = rivertype.JobStateScheduled, nil
		later := now.Add(time.Second)
		scheduled = &later
		n := 1
		attempt = &n
	case 4: // completed with an attempt count (not a plain completion)
		n := 2
		attempt = &n
	}
	p.ID = append(p.ID, id)
	p.Attempt = append(p.Attempt, attempt)
	p.ErrData = append(p.ErrData, errData)
	p.FinalizedAt = append(p.FinalizedAt, finalized)
	p.MetadataDoMerge = append(p.MetadataDoMerge, merge)
	p.MetadataUpdates = append(p.MetadataUpdates, updates)
	p.ScheduledAt = append(p.ScheduledAt, scheduled)
	p.State = append(p.State, state)
}

// insertJob writes one job row as River's insert leaves it (metadata as JSONB when it
// is valid JSON, as text otherwise).
func insertJob(t *testing.T, db *sql.DB, id int64, state, meta string, now time.Time) {
	t.Helper()
	metaExpr := "jsonb(?)"
	if !json.Valid([]byte(meta)) {
		metaExpr = "?"
	}
	ts := sqliteTime(now.Add(-time.Minute))
	var finalized any
	if state == "completed" || state == "cancelled" {
		finalized = ts
	}
	_, err := db.Exec(fmt.Sprintf(`INSERT INTO river_job (id, args, attempt, attempted_at, attempted_by, created_at,
		finalized_at, kind, max_attempts, metadata, priority, queue, state, scheduled_at, tags)
		VALUES (?, jsonb(?), 1, ?, jsonb('["w1"]'), ?, ?, 'k', 25, %s, 1, 'default', ?, ?, jsonb('[]'))`, metaExpr),
		id, fmt.Sprintf(`{"n":%d,"body":"aGVsbG8="}`, id), ts, ts, finalized, meta, state, ts)
	if err != nil {
		t.Fatal(err)
	}
}

// dumpJobs renders every column of every job with an id of at least from, in id order.
func dumpJobs(t *testing.T, db *sql.DB, from int64) []string {
	t.Helper()
	rs, err := db.Query(`SELECT id, quote(args), attempt, attempted_at, quote(attempted_by), created_at, quote(errors),
		finalized_at, kind, max_attempts, typeof(metadata), CASE WHEN typeof(metadata) = 'blob' THEN json(metadata) ELSE metadata END,
		priority, queue, state, scheduled_at, quote(tags), quote(unique_key), unique_states FROM river_job
		WHERE id >= ? ORDER BY id`, from)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		cols := make([]any, 19)
		ptrs := make([]any, len(cols))
		for i := range cols {
			ptrs[i] = &cols[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(cols...))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzMergePatch: for any metadata update River's completer could pass, a job completed
// through the batched executor ends as one completed through River's (the update is
// batched when mergePatch accepts it, River's path otherwise).
func FuzzMergePatch(f *testing.F) {
	for _, u := range metadataUpdates {
		f.Add(u, storedMetadata[0])
	}
	f.Add(`{"a":[1,{"b":null}],"c":"x"}`, `{"a":{"z":1}}`)
	f.Add(`{"a":1} trailing`, `{}`)
	f.Add(` { "a" : 1 } `, `{"b":2}`)
	f.Add(`{"\u0061":1,"a":2}`, `{}`)
	f.Add(`[]`, `{}`)
	f.Add(`{"a":1e400}`, `{}`)
	ctx := context.Background()
	riverDB, want, oursDB, ours := openPair(f)
	// Durability is not what is compared: without an fsync per statement the fuzzer
	// runs about three times as many executions, and comparing only the new job keeps
	// each one as cheap as the first.
	for _, db := range []*sql.DB{riverDB, oursDB} {
		if _, err := db.Exec(`PRAGMA synchronous = OFF`); err != nil {
			f.Fatal(err)
		}
	}
	got := ours.GetExecutor()
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var id int64
	f.Fuzz(func(t *testing.T, update, stored string) {
		if !json.Valid([]byte(update)) || !json.Valid([]byte(stored)) {
			t.Skip() // River's completer passes JSON; stored metadata is JSON (text cases: the test above)
		}
		id++
		for _, db := range []*sql.DB{riverDB, oursDB} {
			insertJob(t, db, id, "running", stored, now)
		}
		p := &riverdriver.JobSetStateIfRunningManyParams{
			ID: []int64{id}, Attempt: []*int{nil}, ErrData: [][]byte{nil}, FinalizedAt: []*time.Time{&now},
			MetadataDoMerge: []bool{true}, MetadataUpdates: [][]byte{[]byte(update)}, ScheduledAt: []*time.Time{nil},
			State: []rivertype.JobState{rivertype.JobStateCompleted}, Now: &now,
		}
		wantRows, wantErr := want.JobSetStateIfRunningMany(ctx, p)
		gotRows, gotErr := got.JobSetStateIfRunningMany(ctx, p)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("River: %v, batched: %v", wantErr, gotErr)
		}
		if w, g := returned(wantRows), returned(gotRows); !slices.Equal(w, g) {
			t.Fatalf("update %s on %s:\n  River:   %s\n  batched: %s", update, stored, w, g)
		}
		if w, g := dumpJobs(t, riverDB, id), dumpJobs(t, oursDB, id); !slices.Equal(w, g) {
			t.Fatalf("update %s on %s:\n  River:   %s\n  batched: %s", update, stored, w, g)
		}
	})
}

// returned is what River's completer reads of the jobs JobSetStateIfRunningMany
// returns (id, state; finalized_at beside them), sorted by id: the batched completion
// returns the jobs it completed as these fields only (sqlite_complete.go). The rows
// themselves are compared whole in the table (dumpJobs).
func returned(rows []*rivertype.JobRow) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		at := "-"
		if r.FinalizedAt != nil {
			at = r.FinalizedAt.UTC().Format(time.RFC3339Nano)
		}
		out = append(out, fmt.Sprintf("job %d %s finalized %s", r.ID, r.State, at))
	}
	slices.Sort(out)
	return out
}

// openPair opens two migrated SQLite ledgers' databases: one with riversqlite's own
// executor, one with the ledger's driver.
func openPair(tb testing.TB) (riverDB *sql.DB, river riverdriver.Executor, oursDB *sql.DB, ours *sqliteDriver) {
	tb.Helper()
	open := func(name string) (*sql.DB, *riversqlite.Driver) {
		ctx := context.Background()
		db, err := openSQLiteDB(ctx, filepath.Join(tb.TempDir(), name), 5*time.Second)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = db.Close() })
		d := riversqlite.New(db)
		if err := migrateSQLite(ctx, d, Config{}); err != nil {
			tb.Fatal(err)
		}
		return db, d
	}
	riverDB, riverDrv := open("river.db")
	oursDB, oursDrv := open("ours.db")
	return riverDB, riverDrv.GetExecutor(), oursDB, newSQLiteDriver(oursDB, oursDrv)
}

// TestSQLiteStatementsFindJobsByID: the statements that take a JSON array of job ids
// (the batched completion, the claimed jobs' holder check) find each job by its rowid,
// with thousands of running jobs in the table and no statistics (the ledger never runs
// ANALYZE): a plan through the state index would test every running job against the
// whole array, seconds per call on the one connection during a burst.
func TestSQLiteStatementsFindJobsByID(t *testing.T) {
	_, _, db, _ := openPair(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
		INSERT INTO river_job (args, attempt, attempted_at, attempted_by, created_at, kind, max_attempts, metadata,
			priority, queue, scheduled_at, state, tags)
		SELECT jsonb('{}'), 1, '2026-12-05 10:00:00.000', jsonb('["w"]'), '2026-12-05 10:00:00.000', 'k', 25,
			jsonb('{}'), 1, 'default', '2026-12-05 10:00:00.000', 'running', jsonb('[]') FROM n`); err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]string{"completeSQL": completeSQL, "heldSQLite": heldSQLite} {
		p := testenv.SQLitePlan(t, db, q, `[{"id":1,"at":"2026-12-05 10:00:01.000","holder":"w"}]`)
		if !strings.Contains(p, "INTEGER PRIMARY KEY") || strings.Contains(p, "prioritized_fetching") {
			t.Errorf("%s does not find jobs by rowid: %s", name, p)
		}
	}
}
