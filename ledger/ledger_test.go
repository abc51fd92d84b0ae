package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

type pingArgs struct {
	N int `json:"n"`
}

func (pingArgs) Kind() string { return "ledger_test_ping" }

// pingWorker reports every attempt on a channel; fail decides each attempt's result.
type pingWorker struct {
	river.WorkerDefaults[pingArgs]
	seen chan *river.Job[pingArgs]
	fail func(job *river.Job[pingArgs]) error
}

func (w *pingWorker) Work(ctx context.Context, job *river.Job[pingArgs]) error {
	w.seen <- job
	if w.fail != nil {
		return w.fail(job)
	}
	return nil
}

type testBundle struct {
	worker *pingWorker
}

func setup(t *testing.T, b ledger.Backend, cfg ledger.Config) (*ledger.Ledger, *testBundle) {
	t.Helper()
	l := ledgertest.Open(t, b, cfg)
	w := &pingWorker{seen: make(chan *river.Job[pingArgs], 100)}
	river.AddWorker(l.Workers(), w)
	if err := l.AddQueue(river.QueueDefault, 4); err != nil {
		t.Fatal(err)
	}
	return l, &testBundle{worker: w}
}

func next(t *testing.T, ch <-chan *river.Job[pingArgs]) *river.Job[pingArgs] {
	t.Helper()
	select {
	case j := <-ch:
		return j
	case <-time.After(20 * time.Second):
		t.Fatal("timed out waiting for a job to be worked")
		return nil
	}
}

func TestLedger(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		t.Run("InsertThenWork", func(t *testing.T) {
			t.Parallel()
			l, bundle := setup(t, b, ledger.Config{})
			ctx := testenv.Context(t, 30*time.Second)
			if l.Backend() != b {
				t.Fatalf("Backend() = %s, want %s", l.Backend(), b)
			}
			// Insert before Start: the insert-only client.
			if _, err := l.Insert(ctx, pingArgs{N: 1}, nil); err != nil {
				t.Fatal(err)
			}
			if err := l.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := l.InsertMany(ctx, []river.InsertManyParams{{Args: pingArgs{N: 2}}}); err != nil {
				t.Fatal(err)
			}
			got := map[int]bool{}
			got[next(t, bundle.worker.seen).Args.N] = true
			got[next(t, bundle.worker.seen).Args.N] = true
			if !got[1] || !got[2] {
				t.Fatalf("worked %v, want jobs 1 and 2", got)
			}
			if err := l.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if err := l.Stop(ctx); err != nil {
				t.Fatalf("second Stop: %v", err)
			}
		})

		t.Run("InsertTxCommitAndRollback", func(t *testing.T) {
			t.Parallel()
			l, bundle := setup(t, b, ledger.Config{})
			ctx := testenv.Context(t, 30*time.Second)
			if err := l.Start(ctx); err != nil {
				t.Fatal(err)
			}
			insert := func(n int, commit bool) {
				t.Helper()
				tx, err := l.DB().BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := l.InsertTx(ctx, tx, pingArgs{N: n}, nil); err != nil {
					t.Fatal(err)
				}
				if commit {
					err = tx.Commit()
				} else {
					err = tx.Rollback()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			insert(1, false)
			if b == ledger.Postgres {
				tx, err := l.Pool().Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := l.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: pingArgs{N: 2}}}); err != nil {
					t.Fatal(err)
				}
				if err := tx.Rollback(ctx); err != nil {
					t.Fatal(err)
				}
			}
			insert(3, true)
			if j := next(t, bundle.worker.seen); j.Args.N != 3 {
				t.Fatalf("worked job %d, want only the committed job 3", j.Args.N)
			}
			res, err := l.JobList(ctx, river.NewJobListParams().Kinds(pingArgs{}.Kind()).States(
				rivertype.JobStateAvailable, rivertype.JobStateCompleted, rivertype.JobStateRunning))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Jobs) != 1 {
				t.Fatalf("%d jobs stored, want 1 (rolled back inserts must leave nothing)", len(res.Jobs))
			}
		})

		t.Run("InsertTxRejectsOtherTypes", func(t *testing.T) {
			t.Parallel()
			l := ledgertest.Open(t, b, ledger.Config{})
			ctx := testenv.Context(t, 10*time.Second)
			for _, tx := range []any{nil, "tx", (*sql.Tx)(nil)} {
				_, err := l.InsertTx(ctx, tx, pingArgs{}, nil)
				if hub.Code(err) != hub.InvalidArgument {
					t.Errorf("InsertTx(%T) = %v, want InvalidArgument", tx, err)
				}
			}
		})

		t.Run("CancelledJobRetried", func(t *testing.T) {
			t.Parallel()
			l, bundle := setup(t, b, ledger.Config{})
			bundle.worker.fail = func(job *river.Job[pingArgs]) error {
				if job.Attempt == 1 {
					return river.JobCancel(errors.New("permanent"))
				}
				return nil
			}
			ctx := testenv.Context(t, 30*time.Second)
			if err := l.Start(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := l.Insert(ctx, pingArgs{N: 7}, nil)
			if err != nil {
				t.Fatal(err)
			}
			next(t, bundle.worker.seen)
			testenv.WaitFor(t, 10*time.Second, "job cancelled", func() bool {
				j, err := l.JobGet(ctx, res.Job.ID)
				return err == nil && j.State == rivertype.JobStateCancelled
			})
			if _, err := l.JobRetry(ctx, res.Job.ID); err != nil {
				t.Fatal(err)
			}
			if j := next(t, bundle.worker.seen); j.Attempt != 2 {
				t.Fatalf("retried attempt = %d, want 2", j.Attempt)
			}
			if _, err := l.JobGet(ctx, 1<<40); hub.Code(err) != hub.NotFound {
				t.Fatalf("JobGet(missing) = %v, want NotFound", err)
			}
		})

		t.Run("SnoozeDoesNotSpendAttempt", func(t *testing.T) {
			t.Parallel()
			l, bundle := setup(t, b, ledger.Config{})
			var calls atomic.Int32
			bundle.worker.fail = func(job *river.Job[pingArgs]) error {
				if calls.Add(1) == 1 {
					return river.JobSnooze(10 * time.Millisecond)
				}
				return nil
			}
			ctx := testenv.Context(t, 30*time.Second)
			if err := l.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Insert(ctx, pingArgs{}, nil); err != nil {
				t.Fatal(err)
			}
			next(t, bundle.worker.seen)
			if j := next(t, bundle.worker.seen); j.Attempt != 1 {
				t.Fatalf("attempt after snooze = %d, want 1", j.Attempt)
			}
		})

		// O2: a job held past the lease by a worker that never returns is taken by
		// another worker.
		t.Run("O2_LeaseRescuesStuckJob", func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			l, bundle := setup(t, b, ledger.Config{
				JobTimeout: 100 * time.Millisecond, RescueStuckJobsAfter: 500 * time.Millisecond,
				RescueInterval: 100 * time.Millisecond,
			})
			t.Cleanup(func() { close(release) }) // runs before the ledger's Close
			bundle.worker.fail = func(job *river.Job[pingArgs]) error {
				if job.Attempt == 1 {
					<-release // ignores its context: a hung send
				}
				return nil
			}
			ctx := testenv.Context(t, 30*time.Second)
			if err := l.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Insert(ctx, pingArgs{}, nil); err != nil {
				t.Fatal(err)
			}
			if j := next(t, bundle.worker.seen); j.Attempt != 1 {
				t.Fatalf("first attempt = %d", j.Attempt)
			}
			if j := next(t, bundle.worker.seen); j.Attempt != 2 {
				t.Fatalf("rescued attempt = %d, want 2", j.Attempt)
			}
		})

		// Every job's creation time is stored at the ledger's precision, from the
		// inserting process's clock, on both stores: a bound taken before the insert
		// is never after it once both are truncated.
		t.Run("CreatedAtAtTimePrecision", func(t *testing.T) {
			t.Parallel()
			l := ledgertest.Open(t, b, ledger.Config{})
			ctx := testenv.Context(t, 10*time.Second)
			tx, err := l.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			before := time.Now()
			res, err := l.InsertTx(ctx, tx, pingArgs{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			many, err := l.InsertMany(ctx, []river.InsertManyParams{{Args: pingArgs{N: 1}}, {Args: pingArgs{N: 2}}})
			if err != nil {
				t.Fatal(err)
			}
			after := time.Now()
			for _, id := range []int64{res.Job.ID, many[0].Job.ID, many[1].Job.ID} {
				j, err := l.JobGet(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				at := j.CreatedAt
				if !at.Equal(ledger.Truncate(at)) {
					t.Errorf("job %d created_at %s is finer than %s", id, at.Format(time.RFC3339Nano), ledger.TimePrecision)
				}
				if at.Before(ledger.Truncate(before)) || at.After(after) {
					t.Errorf("job %d created_at %s outside [%s, %s]", id, at.Format(time.RFC3339Nano),
						ledger.Truncate(before).Format(time.RFC3339Nano), after.Format(time.RFC3339Nano))
				}
			}
		})

		t.Run("ClosedLedgerFails", func(t *testing.T) {
			t.Parallel()
			cfg := ledgertest.Config(t, b, ledger.Config{})
			ctx := testenv.Context(t, 30*time.Second)
			l, err := ledger.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if _, err := l.Insert(ctx, pingArgs{}, nil); hub.Code(err) != hub.FailedPrecondition {
				t.Fatalf("Insert after Close = %v, want FailedPrecondition", err)
			}
			if err := l.Start(ctx); hub.Code(err) != hub.FailedPrecondition {
				t.Fatalf("Start after Close = %v, want FailedPrecondition", err)
			}
		})

		t.Run("NoMigrateLeavesTablesMissing", func(t *testing.T) {
			t.Parallel()
			l := ledgertest.Open(t, b, ledger.Config{NoMigrate: true})
			ctx := testenv.Context(t, 10*time.Second)
			if _, err := l.Insert(ctx, pingArgs{}, nil); err == nil {
				t.Fatal("Insert without River's tables succeeded")
			}
		})
	})
}

func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 20*time.Second)
	_, err := ledger.Open(ctx, ledger.Config{DSN: "postgres://postgres:secret@127.0.0.1:1/x?connect_timeout=2"})
	if hub.Code(err) != hub.Unavailable {
		t.Fatalf("Open(unreachable) = %v, want Unavailable", err)
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Fatalf("error leaks the password: %v", err)
	}
}
