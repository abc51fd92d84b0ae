package engine

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
)

func TestR9_Engine(t *testing.T) {
	t.Parallel()
	forEachDialect(t, func(t *testing.T, d testDialect) {
		t.Run("AutoIDsIncreaseWhenClockStepsBack", func(t *testing.T) {
			t.Parallel()
			var now atomic.Int64
			now.Store(5000)
			e := d.open(t, func(c *Config) { c.Now = func() time.Time { return time.UnixMilli(now.Load()) } })
			ctx := testenv.Context(t, 30*time.Second)
			var ids []ID
			for _, ms := range []int64{5000, 5000, 4000, 6000, 1} {
				now.Store(ms)
				id, ok, err := e.XAdd(ctx, Add{Stream: "s", Values: []string{"k", "v"}})
				if err != nil || !ok {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			want := []string{"5000-0", "5000-1", "5000-2", "6000-0", "6000-1"}
			for i, id := range ids {
				if id.String() != want[i] {
					t.Fatalf("ids %v, want %v", ids, want)
				}
			}
		})
		t.Run("BlockedReadWokenByAppend", func(t *testing.T) {
			t.Parallel()
			e := d.open(t, nil)
			ctx := testenv.Context(t, 30*time.Second)
			if err := e.CreateGroup(ctx, "s", "g", "$"); err != nil {
				t.Fatal(err)
			}
			got := make(chan ReadResult, 1)
			go func() {
				r, _ := e.ReadGroupRaw(ctx, "s", "g", "c", ">", 10, 20*time.Second, false)
				got <- r
			}()
			// The reader may or may not be parked yet; either way it must see the entry.
			if _, _, err := e.XAdd(ctx, Add{Stream: "s", Values: []string{"k", "v"}}); err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-got:
				if len(r.Entries) != 1 {
					t.Fatalf("blocked read returned %+v", r)
				}
			case <-ctx.Done():
				t.Fatal("blocked read not woken")
			}
		})
		t.Run("BlockExpiresWithNil", func(t *testing.T) {
			t.Parallel()
			e := d.open(t, nil)
			ctx := testenv.Context(t, 30*time.Second)
			if err := e.CreateGroup(ctx, "s", "g", "$"); err != nil {
				t.Fatal(err)
			}
			r, err := e.ReadGroupRaw(ctx, "s", "g", "c", ">", 10, 50*time.Millisecond, false)
			if err != nil || !r.Nil {
				t.Fatalf("got %+v, %v; want nil reply", r, err)
			}
		})
		t.Run("ApproxMaxLenTrimsLessNeverMore", func(t *testing.T) {
			t.Parallel()
			e := d.open(t, nil)
			ctx := testenv.Context(t, 30*time.Second)
			adds := make([]Add, 350)
			for i := range adds {
				adds[i] = Add{Stream: "s", Values: []string{"i", "x"}, Trim: &Trim{Approx: true, MaxLen: 100, Limit: -1}}
			}
			if _, err := e.Append(ctx, adds); err != nil {
				t.Fatal(err)
			}
			n, err := e.XLen(ctx, "s")
			if err != nil || n < 100 || n >= 100+approxSlack {
				t.Fatalf("XLEN after MAXLEN ~ 100: %d, %v", n, err)
			}
		})
		t.Run("ConcurrentAppendsAreGroupCommitted", func(t *testing.T) {
			t.Parallel()
			e := d.open(t, nil)
			ctx := testenv.Context(t, 30*time.Second)
			var wg sync.WaitGroup
			for w := 0; w < 8; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 50; i++ {
						if _, _, err := e.XAdd(ctx, Add{Stream: "s", Values: []string{"k", "v"}}); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			n, err := e.XLen(ctx, "s")
			if err != nil || n != 400 {
				t.Fatalf("XLEN = %d, %v; want 400", n, err)
			}
			es, err := e.XRange(ctx, "s", "-", "+", 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(es); i++ {
				if !es[i-1].ID.Less(es[i].ID) {
					t.Fatalf("ids not increasing at %d: %v %v", i, es[i-1].ID, es[i].ID)
				}
			}
		})
		t.Run("DeadLetterMovesAtomically", func(t *testing.T) {
			t.Parallel()
			e := d.open(t, nil)
			ctx := testenv.Context(t, 30*time.Second)
			if err := e.CreateGroup(ctx, "s", "g", "0"); err != nil {
				t.Fatal(err)
			}
			id, _, _ := e.XAdd(ctx, Add{Stream: "s", Values: []string{"k", "v"}})
			if _, err := e.ReadGroup(ctx, "s", "g", "c", ">", 10, 0); err != nil {
				t.Fatal(err)
			}
			if err := e.DeadLetter(ctx, "s", "g", id.String(), "s:dlq", []string{"k", "v", "error", "boom"}); err != nil {
				t.Fatal(err)
			}
			ps, _ := e.XPendingSummary(ctx, "s", "g")
			n, _ := e.XLen(ctx, "s:dlq")
			if ps.Count != 0 || n != 1 {
				t.Fatalf("pending %d, dlq length %d; want 0 and 1", ps.Count, n)
			}
		})
	})
}

// TestR9_PostgresRelaxedPool: on PostgreSQL consumer bookkeeping runs on the relaxed
// pool, whose sessions commit with synchronous_commit off, and everything else on the
// main pool with the server's setting (on): an append never commits relaxed.
func TestR9_PostgresRelaxedPool(t *testing.T) {
	t.Parallel()
	e := openT(t, postgresConfigT(t, nil))
	ctx := context.Background()
	setting := func(relaxed bool) string {
		var v string
		if err := e.inTxMode(ctx, relaxed, func(tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, "SELECT current_setting('synchronous_commit')").Scan(&v)
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for range 3 { // and again on connections the pools reuse
		if got := setting(true); got != "off" {
			t.Fatalf("relaxed transaction: synchronous_commit = %q, want off", got)
		}
		if got := setting(false); got != "on" {
			t.Fatalf("durable transaction: synchronous_commit = %q, want on", got)
		}
	}
	// The append paths use the main pool's connections (appendFast) or durable
	// transactions: their session keeps the server's setting.
	var v string
	if err := e.db.QueryRowContext(ctx, "SELECT current_setting('synchronous_commit')").Scan(&v); err != nil || v != "on" {
		t.Fatalf("main pool: synchronous_commit = %q, %v; want on", v, err)
	}
}
