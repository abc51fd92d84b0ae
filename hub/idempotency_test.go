package hub_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// TestR5_Idempotent: a handler wrapped with the idempotency store runs once per event id
// (R5; E3: consumers deduplicate by event id).
func TestR5_Idempotent(t *testing.T) {
	t.Parallel()

	t.Run("SkipsSeenIdsAndMarksOnlyAfterSuccess", func(t *testing.T) {
		t.Parallel()
		store := hub.NewMemoryIdempotencyStore()
		runs := 0
		fail := true
		h := hub.Idempotent(store, "billing", func(context.Context, *cloudevent.Event) error {
			runs++
			if fail {
				return errors.New("db down")
			}
			return nil
		})
		ev := event("user.created")
		if err := h(context.Background(), ev); err == nil {
			t.Fatal("handler error swallowed")
		}
		fail = false
		for range 3 {
			if err := h(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
		}
		if runs != 2 {
			t.Fatalf("handler ran %d times, want 2 (one failure, one success, then skips)", runs)
		}
		other := hub.Idempotent(store, "audit", func(context.Context, *cloudevent.Event) error { runs++; return nil })
		if err := other(context.Background(), ev); err != nil || runs != 3 {
			t.Fatalf("another scope must process the event too (runs %d, err %v)", runs, err)
		}
	})

	t.Run("StoreErrorFailsTheDelivery", func(t *testing.T) {
		t.Parallel()
		down := hub.Errorf(hub.Unavailable, "store down")
		h := hub.Idempotent(brokenStore{down}, "g", func(context.Context, *cloudevent.Event) error {
			t.Fatal("handler ran although the store is down")
			return nil
		})
		if err := h(context.Background(), event("a")); !errors.Is(err, down) {
			t.Fatalf("err = %v, want the store's", err)
		}
	})
}

type brokenStore struct{ err error }

func (s brokenStore) Seen(context.Context, string) (bool, error)                 { return false, s.err }
func (s brokenStore) MarkProcessed(context.Context, string, time.Duration) error { return s.err }

func TestMemoryIdempotencyStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("BoundedMemory", func(t *testing.T) {
		t.Parallel()
		s := hub.NewMemoryIdempotencyStoreSize(100)
		for i := range 1000 {
			if err := s.MarkProcessed(ctx, fmt.Sprint(i), time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		if s.Len() != 100 {
			t.Fatalf("Len = %d, want the bound 100", s.Len())
		}
		if seen, _ := s.Seen(ctx, "999"); !seen {
			t.Fatal("newest key evicted")
		}
		if seen, _ := s.Seen(ctx, "0"); seen {
			t.Fatal("oldest key kept beyond the bound")
		}
	})

	t.Run("ConcurrentUse", func(t *testing.T) {
		t.Parallel()
		s := hub.NewMemoryIdempotencyStoreSize(500)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 200 {
					key := fmt.Sprintf("%d-%d", g, i)
					_ = s.MarkProcessed(ctx, key, time.Hour)
					_, _ = s.Seen(ctx, key)
				}
			})
		}
		wg.Wait()
		if s.Len() > 500 {
			t.Fatalf("Len = %d beyond the bound", s.Len())
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		t.Parallel()
		s := hub.NewMemoryIdempotencyStore()
		c, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Seen(c, "k"); hub.Code(err) != hub.Canceled {
			t.Fatalf("Seen = %v, want Canceled", err)
		}
	})
}
