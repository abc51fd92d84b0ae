package outbox_test

import (
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
)

// The hub's PublishTx through this outbox: one row per matching route, in the caller's
// transaction (O4), relayed once after commit and never after rollback.
func TestO4_HubPublishTx(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		l := ledgertest.Open(t, b, ledger.Config{})
		dests := &outbox.Destinations{}
		o, err := outbox.New(l, fastRetry, dests.Lookup)
		if err != nil {
			t.Fatal(err)
		}
		h, err := hub.New(hub.WithOutbox(o))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		orders := newSink()
		dests.Set("orders", orders)
		if err := h.Forward("order.*", orders, hub.WithName("orders"), hub.WithDelivery(hub.OutboxMode)); err != nil {
			t.Fatal(err)
		}
		createBusinessTable(t, l)
		start(t, l)
		ctx := testenv.Context(t, 30*time.Second)

		publishTx := func(id string, ev *cloudevent.Event, commit bool) {
			t.Helper()
			tx, err := l.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := insertOrder(ctx, l, tx, id); err != nil {
				t.Fatal(err)
			}
			if err := h.PublishTx(ctx, tx, ev); err != nil {
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
		rolledBack, committed := newEvent(t, 1), newEvent(t, 2)
		publishTx("o1", rolledBack, false)
		publishTx("o2", committed, true)
		orders.waitUntil(t, "the committed event", func(d, _, _ int) bool { return d >= 1 })
		// Outbox mode on Publish: stored before Publish returns, then relayed.
		plain := newEvent(t, 3)
		if err := h.Publish(ctx, plain); err != nil {
			t.Fatal(err)
		}
		orders.waitUntil(t, "the published event", func(d, _, _ int) bool { return d >= 2 })
		if orders.deliveries(rolledBack.ID) != 0 || orders.deliveries(committed.ID) != 1 || orders.deliveries(plain.ID) != 1 {
			d, n, _ := orders.counts()
			t.Fatalf("deliveries: rolled back %d, committed %d, published %d (want 0, 1, 1; %d distinct, %d total)",
				orders.deliveries(rolledBack.ID), orders.deliveries(committed.ID), orders.deliveries(plain.ID), d, n)
		}
	})
}
