package webhook

import (
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// TestH6_AcceptedAtExcludesLaterEndpoints: Send decides recipients by the time the
// event was accepted (hub.AcceptedAtFrom), not the time Send runs: an endpoint
// registered after that time gets nothing; one registered no later does. Per-event
// times in one batch are honoured each.
func TestH6_AcceptedAtExcludesLaterEndpoints(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		before := tb.endpoint(t, "/before")
		evOld := newEvent(t, "user.created")
		evNew := newEvent(t, "user.created")
		acceptedOld := before.CreatedAt // created_at <= accepted_at: included
		// Registration counts from the start of its millisecond (ledger.TimePrecision):
		// the second endpoint must be registered in a later one to be "after".
		leaveMillisecond(acceptedOld)
		after := tb.endpoint(t, "/after")
		acceptedNew := after.CreatedAt.Add(time.Microsecond)

		ctx := hub.WithAcceptedAtByEvent(tb.ctx, map[string]time.Time{evOld.ID: acceptedOld, evNew.ID: acceptedNew})
		if err := tb.tr.Send(ctx, []*cloudevent.Event{evOld, evNew}); err != nil {
			t.Fatalf("Send: %v", err)
		}
		tb.waitStates(t, DeliveryFilter{EndpointID: before.ID}, 2, DeliveryDelivered)
		ds := tb.waitStates(t, DeliveryFilter{EndpointID: after.ID}, 1, DeliveryDelivered)
		if ds[0].EventID != evNew.ID {
			t.Fatalf("endpoint registered after %s got it (delivery of %s), want only %s", evOld.ID, ds[0].EventID, evNew.ID)
		}

		// One time for the whole Send, before the second endpoint existed.
		ev := newEvent(t, "user.created")
		if err := tb.tr.Send(hub.WithAcceptedAt(tb.ctx, acceptedOld), []*cloudevent.Event{ev}); err != nil {
			t.Fatalf("Send: %v", err)
		}
		tb.waitStates(t, DeliveryFilter{EndpointID: before.ID}, 3, DeliveryDelivered)
		if got := tb.deliveries(t, DeliveryFilter{EndpointID: after.ID}); len(got) != 1 {
			t.Fatalf("endpoint registered after the accept time has %d deliveries, want 1 (only %s)", len(got), evNew.ID)
		}
	})
}
