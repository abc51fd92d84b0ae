package dedupe

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
)

type testBundle struct {
	l      *ledger.Ledger
	store  *Store
	outbox *outbox.Outbox
	hub    *hub.Hub
}

// setup opens a ledger on backend b, the window on it, and a hub whose one route
// ("#" -> "dest") is an outbox route through WrapOutbox. No relay runs: the rows stay
// pending, so counting them counts what was stored.
func setup(t *testing.T, b ledger.Backend, outboxOnly bool) *testBundle {
	t.Helper()
	l := ledgertest.Open(t, b, ledger.Config{})
	s, err := Open(testenv.Context(t, 30*time.Second), l, Config{PruneInterval: -1, OutboxOnly: outboxOnly, Logger: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ob, err := outbox.New(l, outbox.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hub.New(hub.WithOutbox(WrapOutbox(ob)), hub.WithLogger(testenv.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if err := h.Forward("#", nopTransport{}, hub.WithName("dest"), hub.WithDelivery(hub.OutboxMode)); err != nil {
		t.Fatal(err)
	}
	return &testBundle{l: l, store: s, outbox: ob, hub: h}
}

type nopTransport struct{}

func (nopTransport) Send(context.Context, []*cloudevent.Event) error { return nil }
func (nopTransport) Close() error                                    { return nil }

func event(tenant, id, data string) *cloudevent.Event {
	ev := cloudevent.New("/test", "shop.order.placed")
	ev.ID = id
	ev.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev.SetTenantID(tenant)
	ev.Data = []byte(`{"v":"` + data + `"}`)
	return ev
}

// admit publishes evs through the hub, as the ingress does.
func (b *testBundle) admit(t *testing.T, evs ...*cloudevent.Event) ([]hub.Admission, error) {
	t.Helper()
	keys := make([]hub.EventKey, len(evs))
	for i, ev := range evs {
		keys[i] = hub.KeyOf(ev)
	}
	return b.store.Admit(testenv.Context(t, 30*time.Second), keys, time.Hour, func(ctx context.Context, fresh []int) error {
		pick := make([]*cloudevent.Event, len(fresh))
		for j, i := range fresh {
			pick[j] = evs[i]
		}
		return b.hub.Publish(ctx, pick...)
	})
}

func (b *testBundle) rows(t *testing.T) int64 {
	t.Helper()
	st, err := b.outbox.Stats(testenv.Context(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, d := range st {
		n += d.Pending
	}
	return n
}

func (b *testBundle) records(t *testing.T) int {
	t.Helper()
	var n int
	if err := b.l.DB().QueryRowContext(testenv.Context(t, 30*time.Second), "SELECT count(*) FROM "+b.store.table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestR5_StoreAdmitsOncePerTenantAndID runs the window on both backends, with a lookup
// first and with OutboxOnly, through a hub whose route is an outbox route: the records
// are written with the rows.
func TestR5_StoreAdmitsOncePerTenantAndID(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, be ledger.Backend) {
		for _, outboxOnly := range []bool{false, true} {
			name := "LookupFirst"
			if outboxOnly {
				name = "OutboxOnly"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				testStore(t, be, outboxOnly)
			})
		}
	})
}

func testStore(t *testing.T, be ledger.Backend, outboxOnly bool) {
	t.Run("DuplicateStoresNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, be, outboxOnly)
		as, err := b.admit(t, event("acme", "evt_1", "a"), event("acme", "evt_2", "b"))
		if err != nil || !reflect.DeepEqual(as, []hub.Admission{hub.Admitted, hub.Admitted}) {
			t.Fatalf("first: %v %v", as, err)
		}
		as, err = b.admit(t, event("acme", "evt_1", "a"), event("globex", "evt_1", "a"))
		if err != nil || !reflect.DeepEqual(as, []hub.Admission{hub.Duplicate, hub.Admitted}) {
			t.Fatalf("second: %v %v", as, err)
		}
		if n := b.rows(t); n != 3 {
			t.Errorf("outbox rows %d, want 3 (the duplicate stored nothing)", n)
		}
		if n := b.records(t); n != 3 {
			t.Errorf("records %d, want 3", n)
		}
	})
	t.Run("ConflictStoresNothingOfTheRequest", func(t *testing.T) {
		t.Parallel()
		b := setup(t, be, outboxOnly)
		if _, err := b.admit(t, event("acme", "evt_1", "a")); err != nil {
			t.Fatal(err)
		}
		as, err := b.admit(t, event("acme", "evt_new", "n"), event("acme", "evt_1", "CHANGED"))
		if err != nil || !reflect.DeepEqual(as, []hub.Admission{hub.Admitted, hub.Conflict}) {
			t.Fatalf("conflict: %v %v", as, err)
		}
		if n, r := b.rows(t), b.records(t); n != 1 || r != 1 {
			t.Errorf("rows %d records %d, want 1 and 1: nothing of the refused request stored", n, r)
		}
	})
	t.Run("FailedPublishRecordsNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, be, outboxOnly)
		boom := errors.New("outbox down")
		keys := []hub.EventKey{hub.KeyOf(event("acme", "evt_1", "a"))}
		_, err := b.store.Admit(context.Background(), keys, time.Hour, func(context.Context, []int) error { return boom })
		if !errors.Is(err, boom) || b.records(t) != 0 {
			t.Fatalf("err %v, records %d", err, b.records(t))
		}
		// The outbox's own transaction failing (a closed hub) stores neither.
		b.hub.Close()
		if _, err := b.admit(t, event("acme", "evt_1", "a")); err == nil {
			t.Fatal("publish on a closed hub succeeded")
		}
		if b.records(t) != 0 {
			t.Errorf("a record without rows")
		}
	})
	t.Run("WithoutOutboxRouteRecordedAfterPublish", func(t *testing.T) {
		t.Parallel()
		if outboxOnly {
			t.Skip("OutboxOnly promises that no event goes to a direct route")
		}
		b := setup(t, be, outboxOnly)
		var calls atomic.Int32
		keys := []hub.EventKey{hub.KeyOf(event("acme", "evt_d", "a"))}
		publish := func(context.Context, []int) error { calls.Add(1); return nil } // a direct route
		for range 2 {
			if _, err := b.store.Admit(context.Background(), keys, time.Hour, publish); err != nil {
				t.Fatal(err)
			}
		}
		if calls.Load() != 1 || b.records(t) != 1 {
			t.Errorf("published %d times, %d records", calls.Load(), b.records(t))
		}
	})
	t.Run("ConcurrentIdenticalRequestsStoreOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, be, outboxOnly)
		// Both requests pass the lookup before either stores: the transaction decides.
		var arrived sync.WaitGroup
		arrived.Add(2)
		keys := []hub.EventKey{hub.KeyOf(event("acme", "evt_c", "a"))}
		var published atomic.Int32
		results := make([][]hub.Admission, 2)
		var wg sync.WaitGroup
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				first := true
				as, err := b.store.Admit(context.Background(), keys, time.Hour, func(ctx context.Context, fresh []int) error {
					if first {
						first = false
						arrived.Done()
						arrived.Wait()
					}
					if err := b.hub.Publish(ctx, event("acme", "evt_c", "a")); err != nil {
						return err
					}
					published.Add(1)
					return nil
				})
				if err != nil {
					t.Error(err)
				}
				results[g] = as
			}()
		}
		wg.Wait()
		if published.Load() != 1 || b.rows(t) != 1 {
			t.Fatalf("published %d, rows %d: want one", published.Load(), b.rows(t))
		}
		got := []hub.Admission{results[0][0], results[1][0]}
		if !(got[0] == hub.Admitted && got[1] == hub.Duplicate) && !(got[0] == hub.Duplicate && got[1] == hub.Admitted) {
			t.Errorf("verdicts %v, want one Admitted and one Duplicate", got)
		}
	})
	t.Run("ExpiryAndPrune", func(t *testing.T) {
		t.Parallel()
		b := setup(t, be, outboxOnly)
		now := time.Now()
		b.store.now = func() time.Time { return now }
		if _, err := b.admit(t, event("acme", "evt_1", "a"), event("acme", "evt_2", "a")); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour) // the window (Admit's ttl) has passed
		as, err := b.admit(t, event("acme", "evt_1", "other content"))
		if err != nil || as[0] != hub.Admitted {
			t.Fatalf("after the window: %v %v", as, err)
		}
		b.store.cfg.PruneBatch = 1 // several statements
		n, err := b.store.Prune(context.Background())
		if err != nil || n != 1 || b.records(t) != 1 {
			t.Errorf("pruned %d (%v), %d records left; want 1 and 1", n, err, b.records(t))
		}
	})
	t.Run("SurvivesReopen", func(t *testing.T) {
		t.Parallel()
		b := setup(t, be, outboxOnly)
		if _, err := b.admit(t, event("acme", "evt_1", "a")); err != nil {
			t.Fatal(err)
		}
		cfg := b.l.Config()
		b.hub.Close()
		b.store.Close()
		if err := b.l.Close(); err != nil {
			t.Fatal(err)
		}
		l, err := ledger.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		s, err := Open(context.Background(), l, Config{PruneInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		keys := []hub.EventKey{hub.KeyOf(event("acme", "evt_1", "a")), hub.KeyOf(event("acme", "evt_1", "b"))}
		as, _ := s.Admit(context.Background(), keys[:1], time.Hour, func(context.Context, []int) error { t.Error("published a duplicate"); return nil })
		if as[0] != hub.Duplicate {
			t.Errorf("after reopening: %v, want Duplicate", as)
		}
		as, _ = s.Admit(context.Background(), keys[1:], time.Hour, func(context.Context, []int) error { t.Error("published a conflict"); return nil })
		if as[0] != hub.Conflict {
			t.Errorf("other content after reopening: %v, want Conflict", as)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{{Table: "x;drop"}, {Table: "Upper"}, {PruneBatch: -1}} {
		c.setDefaults()
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
