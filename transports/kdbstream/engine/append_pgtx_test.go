package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/koder/eventhub/internal/testenv"
)

// pgxPool is a pool of another client on the engine's schema, as a ledger's is.
func pgxPool(t *testing.T, cfg Config) *pgxpool.Pool {
	t.Helper()
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	pc.ConnConfig.RuntimeParams["search_path"] = cfg.Schema
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// AppendPgTx writes entries in another pool's transaction: ids from the locked row,
// visible only after the commit, nothing after a rollback, NOMKSTREAM and WRONGTYPE as
// XADD answers them, several streams in one call, and concurrent transactions on one
// stream taking turns without a duplicate or a gap in the ids.
func TestAppendPgTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := postgresConfigT(t, nil)
	e := openT(t, cfg)
	pool := pgxPool(t, cfg)
	if same, err := e.SameDatabase(ctx, pool); err != nil || !same {
		t.Fatalf("SameDatabase on the engine's schema = %v, %v", same, err)
	}
	other := pgxPool(t, Config{DSN: cfg.DSN, Schema: "public"})
	if same, _ := e.SameDatabase(ctx, other); same {
		t.Fatal("SameDatabase: a pool on another schema passed")
	}
	if _, _, err := e.XAdd(ctx, Add{Stream: "s", Values: []string{"k", "0"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Set(ctx, "str", "v", SetOptions{}); err != nil {
		t.Fatal(err)
	}

	inTx := func(f func(tx pgx.Tx) error) error {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		if err := f(tx); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	var res []AddResult
	var committed func()
	err := inTx(func(tx pgx.Tx) (err error) {
		res, committed, err = e.AppendPgTx(ctx, tx, []Add{
			{Stream: "s", Values: []string{"k", "1"}},
			{Stream: "new", Values: []string{"k", "a"}},
			{Stream: "absent", NoMkStream: true, Values: []string{"k", "x"}},
			{Stream: "s", ID: "1-1", Values: []string{"k", "too small"}},
			{Stream: "s", Values: []string{"k", "2"}},
		})
		if err != nil {
			return err
		}
		// Another connection (a plain read: the engine's commands lock the row, which
		// this transaction holds) sees nothing yet.
		var n int
		if err := other.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{cfg.Schema, "kdb_entries"}.Sanitize()).Scan(&n); err != nil || n != 1 {
			return fmt.Errorf("before the commit another connection sees %d entries (%v), want 1", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	committed()
	if res[0].Err != nil || res[1].Err != nil || !res[2].Nil || res[3].Err == nil || res[4].Err != nil || !res[0].ID.Less(res[4].ID) {
		t.Fatalf("results: %+v", res)
	}
	if n, _ := e.XLen(ctx, "s"); n != 3 {
		t.Fatalf("XLen s = %d after the commit, want 3", n)
	}
	if n, _ := e.XLen(ctx, "new"); n != 1 {
		t.Fatalf("XLen new = %d, want 1 (created in the transaction)", n)
	}
	if n, _ := e.XLen(ctx, "absent"); n != 0 {
		t.Fatal("NOMKSTREAM made a stream")
	}
	// The engine's own committer goes on from the row the transaction left.
	id, _, err := e.XAdd(ctx, Add{Stream: "s", Values: []string{"k", "3"}})
	if err != nil || !res[4].ID.Less(id) {
		t.Fatalf("XADD after the transaction: %v, %v", id, err)
	}

	boom := errors.New("rolled back")
	if err := inTx(func(tx pgx.Tx) error {
		if _, _, err := e.AppendPgTx(ctx, tx, []Add{{Stream: "s", Values: []string{"k", "lost"}}}); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if n, _ := e.XLen(ctx, "s"); n != 4 {
		t.Fatalf("XLen s = %d after a rollback, want 4", n)
	}
	err = inTx(func(tx pgx.Tx) error {
		_, _, err := e.AppendPgTx(ctx, tx, []Add{{Stream: "str", Values: []string{"k", "v"}}})
		return err
	})
	if err == nil || !errors.Is(err, errWrongType) {
		t.Fatalf("append to a string key: %v, want WRONGTYPE", err)
	}

	// Concurrent transactions on one stream, with the committer appending meanwhile.
	var wg sync.WaitGroup
	errs := make(chan error, 9)
	for w := range 8 {
		wg.Go(func() {
			for i := range 25 {
				err := inTx(func(tx pgx.Tx) error {
					_, _, err := e.AppendPgTx(ctx, tx, []Add{{Stream: "c", Values: []string{"w", fmt.Sprint(w), "i", fmt.Sprint(i)}},
						{Stream: "c", Values: []string{"w", fmt.Sprint(w), "i", fmt.Sprint(i) + "b"}}})
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			if _, _, err := e.XAdd(ctx, Add{Stream: "c", Values: []string{"w", "committer"}}); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := e.XRange(ctx, "c", "-", "+", -1)
	if err != nil || len(all) != 8*25*2+50 {
		t.Fatalf("XRANGE c: %d entries, %v; want %d", len(all), err, 8*25*2+50)
	}
	for i := 1; i < len(all); i++ {
		if !all[i-1].ID.Less(all[i].ID) {
			t.Fatalf("ids out of order at %d: %v then %v", i, all[i-1].ID, all[i].ID)
		}
	}
	if info, err := e.XInfoStream(ctx, "c"); err != nil || info.Length != int64(len(all)) || info.LastGeneratedID != all[len(all)-1].ID || info.EntriesAdded != int64(len(all)) {
		t.Fatalf("the stream row disagrees with its entries: %+v, %v", info, err)
	}
}

// The committer never waits for one stream's lock while holding another's, so it
// cannot close a lock cycle with a transaction that locks the same streams in another
// order (the ingress appending for one kdbstream transport after another): with "b"
// held elsewhere, a batch on "a" and "b" leaves "a" free to lock, and commits once
// both are free.
func TestCommitterHoldsNoStreamWhileWaiting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := postgresConfigT(t, nil)
	e := openT(t, cfg)
	// The test must take "a" while the committer still retries without waiting: give
	// it longer than the default 2s, which a loaded machine can use up.
	e.lockRetryFor.Store(int64(30 * time.Second))
	pool := pgxPool(t, cfg)
	for _, s := range []string{"a", "b"} {
		if _, _, err := e.XAdd(ctx, Add{Stream: s, Values: []string{"k", "0"}}); err != nil {
			t.Fatal(err)
		}
	}
	lock := func(name string) pgx.Tx {
		t.Helper()
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(ctx) }) // before the engine closes, on a failure too
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '1s'"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT id FROM kdb_streams WHERE name = $1 FOR UPDATE`, name); err != nil {
			t.Fatalf("lock %s while the committer's batch waits: %v", name, err)
		}
		return tx
	}
	holdB := lock("b")
	done := make(chan error, 1)
	go func() {
		_, err := e.Append(ctx, []Add{{Stream: "a", Values: []string{"k", "1"}}, {Stream: "b", Values: []string{"k", "1"}}})
		done <- err
	}()
	testenv.WaitFor(t, 10*time.Second, "the committer to retry", func() bool { return e.lockRetries.Load() > 0 })
	holdA := lock("a") // would time out if the committer held "a" while waiting for "b"
	select {
	case err := <-done:
		t.Fatalf("the batch committed while both streams were held elsewhere: %v", err)
	default:
	}
	if err := holdA.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := holdB.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the batch after both locks were released: %v", err)
	}
	for _, s := range []string{"a", "b"} {
		if n, err := e.XLen(ctx, s); err != nil || n != 2 {
			t.Fatalf("XLEN %s = %d, %v; want 2", s, n, err)
		}
	}
}
