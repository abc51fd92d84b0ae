package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
)

// TestR9_PostgresSharedByTwoEngines: two engines on one schema stand for two hub
// processes. A read blocked on one is woken by an append on the other through
// LISTEN/NOTIFY (the poll fallback is set to a minute, so only NOTIFY can wake it in
// time), and concurrent appends and group reads from both keep ids increasing and
// deliver each entry to exactly one consumer.
func TestR9_PostgresSharedByTwoEngines(t *testing.T) {
	t.Parallel()
	a := openPostgresT(t, func(c *Config) { c.PollInterval = time.Minute })
	b, err := Open(context.Background(), Config{Driver: DriverPostgres, DSN: a.cfg.DSN, Schema: a.cfg.Schema, PollInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := testenv.Context(t, time.Minute)

	t.Run("NotifyWakesOtherProcess", func(t *testing.T) {
		if err := a.CreateGroup(ctx, "wake", "g", "$"); err != nil {
			t.Fatal(err)
		}
		got := make(chan ReadResult, 1)
		go func() {
			r, _ := a.ReadGroupRaw(ctx, "wake", "g", "c", ">", 10, 30*time.Second, false)
			got <- r
		}()
		testenv.WaitFor(t, 10*time.Second, "the reader to wait for appends", func() bool {
			a.waiters.mu.Lock()
			defer a.waiters.mu.Unlock()
			_, ok := a.waiters.ch["wake"]
			return ok
		})
		if _, _, err := b.XAdd(ctx, Add{Stream: "wake", Values: []string{"k", "v"}}); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-got:
			if len(r.Entries) != 1 {
				t.Fatalf("woken with %+v", r)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a read blocked on one engine was not woken by an append on the other (NOTIFY lost)")
		}
	})

	// The committer's remembered stream row (dialect_postgres_append.go) goes stale
	// when another process appends or deletes: the next append must see that and
	// still be right.
	t.Run("AppendAfterOtherWriter", func(t *testing.T) {
		add := func(e *Engine) ID {
			t.Helper()
			id, _, err := e.XAdd(ctx, Add{Stream: "stale", Values: []string{"k", "v"}})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		first := add(a)
		add(a) // a now remembers the row
		other := add(b)
		if _, err := b.XDel(ctx, "stale", first.String()); err != nil {
			t.Fatal(err)
		}
		last := add(a)
		if !other.Less(last) {
			t.Fatalf("append after another process's got id %s, not above %s", last, other)
		}
		n, err := a.XLen(ctx, "stale")
		if err != nil {
			t.Fatal(err)
		}
		info, err := b.XInfoStream(ctx, "stale")
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 || info.LastGeneratedID != last || info.EntriesAdded != 4 || info.MaxDeletedEntryID != first {
			t.Fatalf("XLEN %d, last id %s, entries added %d, max deleted %s; want 3, %s, 4, %s",
				n, info.LastGeneratedID, info.EntriesAdded, info.MaxDeletedEntryID, last, first)
		}
	})

	t.Run("ConcurrentAppendsAndReads", func(t *testing.T) {
		const perEngine = 200
		if err := a.CreateGroup(ctx, "shared", "g", "0"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, e := range []*Engine{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < perEngine/20; i++ {
					adds := make([]Add, 20)
					for j := range adds {
						adds[j] = Add{Stream: "shared", Values: []string{"k", "v"}}
					}
					if _, err := e.Append(ctx, adds); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		seen := map[ID]int{}
		var mu sync.Mutex
		for i, e := range []*Engine{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					r, err := e.ReadGroupRaw(ctx, "shared", "g", []string{"ca", "cb"}[i], ">", 7, -1, false)
					if err != nil {
						t.Error(err)
						return
					}
					if r.Nil {
						return
					}
					mu.Lock()
					for _, en := range r.Entries {
						seen[en.ID]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		es, err := b.XRange(ctx, "shared", "-", "+", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 2*perEngine || len(seen) != 2*perEngine {
			t.Fatalf("%d entries, %d delivered; want %d", len(es), len(seen), 2*perEngine)
		}
		for i := 1; i < len(es); i++ {
			if !es[i-1].ID.Less(es[i].ID) {
				t.Fatalf("ids not increasing at %d", i)
			}
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("entry %s delivered %d times", id, n)
			}
		}
	})
}
