package ledger_test

import (
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// AfterCommit runs its callbacks after InTx's commit only, never for a rollback, and
// refuses a transaction InTx did not begin.
func TestAfterCommit(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		l := ledgertest.Open(t, b, ledger.Config{})
		ctx := testenv.Context(t, 30*time.Second)
		var ran []string
		err := l.InTx(ctx, func(tx any) error {
			if !l.AfterCommit(tx, func() { ran = append(ran, "first") }) {
				t.Error("AfterCommit refused InTx's own transaction")
			}
			l.AfterCommit(tx, func() { ran = append(ran, "second") })
			if len(ran) != 0 {
				t.Error("a callback ran before the commit")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(ran) != 2 || ran[0] != "first" || ran[1] != "second" {
			t.Fatalf("after the commit ran %v; want [first second]", ran)
		}

		ran = nil
		boom := errors.New("boom")
		var kept any
		if err := l.InTx(ctx, func(tx any) error {
			kept = tx
			l.AfterCommit(tx, func() { ran = append(ran, "rolled back") })
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("InTx = %v; want f's error", err)
		}
		if len(ran) != 0 {
			t.Fatalf("a rolled-back transaction ran %v", ran)
		}
		if l.AfterCommit(kept, func() {}) {
			t.Fatal("AfterCommit took a transaction that has ended")
		}

		if b == ledger.SQLite {
			tx, err := l.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if l.AfterCommit(tx, func() {}) {
				t.Fatal("AfterCommit took a transaction InTx did not begin")
			}
		}
	})
}

// On SQLite a job inserted through InTx wakes the working client as soon as the
// commit returns (sqlite_wake.go), instead of at River's next notification poll.
func TestSQLiteInsertInTxWakesTheProducer(t *testing.T) {
	t.Parallel()
	l, bundle := setup(t, ledger.SQLite, ledger.Config{})
	ctx := testenv.Context(t, 30*time.Second)
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	before := ledger.Woken(l)
	if err := l.InTx(ctx, func(tx any) error {
		_, err := l.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: pingArgs{N: 7}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if j := next(t, bundle.worker.seen); j.Args.N != 7 {
		t.Fatalf("worked job %d; want 7", j.Args.N)
	}
	// The producer's fetch at start can take the job before the wake-up is read, so
	// the wake may be counted a moment after the job ran.
	testenv.WaitFor(t, 5*time.Second, "the insert's commit to wake the producer in process", func() bool { return ledger.Woken(l) > before })
}

// WakeQueue reaches the producers on both stores: River's insert notification on
// PostgreSQL, the in-process wake-up on SQLite. A job made available behind River's
// back (as a scheduled one brought forward is) is worked at once after the wake-up,
// with the fallback fetch a minute away.
func TestWakeQueue(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		l, bundle := setup(t, b, ledger.Config{FetchPollInterval: time.Minute})
		ctx := testenv.Context(t, 30*time.Second)
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := l.Insert(ctx, pingArgs{N: 9}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		// The producer's fetches after the start and the insert are done: on SQLite
		// when the ledger's fetch count stood still for 300 ms, on PostgreSQL (no count
		// there) after 300 ms.
		settle(t, l)
		fetches := ledger.Fetches(l)
		past := `now() - interval '1 second'` // in each store's own time format
		if b == ledger.SQLite {
			past = `strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 second')`
		}
		q := `UPDATE river_job SET state = 'available', scheduled_at = ` + past + ` WHERE id = $1`
		if _, err := l.DB().ExecContext(ctx, q, res.Job.ID); err != nil {
			t.Fatal(err)
		}
		before := ledger.Woken(l)
		if ledger.Fetches(l) != fetches {
			// A producer fetched after the job became available: it may have found it
			// without the wake-up, and the test would prove nothing.
			t.Fatal("inconclusive: a fetch ran between making the job available and WakeQueue")
		}
		if err := l.WakeQueue(ctx, river.QueueDefault); err != nil {
			t.Fatal(err)
		}
		select {
		case j := <-bundle.worker.seen:
			if j.Args.N != 9 {
				t.Fatalf("worked job %d; want 9", j.Args.N)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the job made available was not worked after WakeQueue (the next fallback fetch is a minute away)")
		}
		if b == ledger.SQLite && ledger.Woken(l) == before {
			t.Fatal("WakeQueue did not wake the producer in process")
		}
	})
}

// settle waits until l's producers are idle: their fetch count unchanged for 300 ms on
// SQLite, 300 ms on PostgreSQL.
func settle(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	if ledger.Fetches(l) < 0 {
		time.Sleep(300 * time.Millisecond)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := ledger.Fetches(l); time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		m := ledger.Fetches(l)
		if m == n {
			return
		}
		n = m
	}
	t.Fatal("the producers kept fetching for 10 s")
}
