package transporttest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/koder/eventhub/cloudevent"
)

var errHandler = errors.New("transporttest: handler fails on purpose")

// TestRedelivery fails the handler on the first delivery of one event and checks that
// the event is delivered again, and that the events around it still arrive.
func TestRedelivery(t *testing.T, h Harness, f Features) {
	if !f.Redelivery {
		t.Skip("transport does not redeliver after a failed handler (Features.Redelivery is false)")
	}
	sent := NewEvents(3)
	failing := sent[1].ID
	rec := newRecorder(f)
	rec.fail = func(ev *cloudevent.Event, delivery int) error {
		if ev.ID == failing && delivery == 1 {
			return errHandler
		}
		return nil
	}
	stop := h.Consume("", rec.handle)
	defer stop()
	if err := h.Transport().Send(context.Background(), sent); err != nil {
		t.Fatalf("Send: %v", err)
	}
	rec.waitIDs(t, "the failed event's redelivery and its neighbours", sent)
	if n := rec.deliveries(failing); n < 2 {
		t.Fatalf("failed event delivered %d times, want at least 2", n)
	}
}

// TestDuplicateDelivery sends the same event twice (what a publisher retry after a lost
// acknowledgement does) and checks that this is harmless: whatever arrives is acked
// without error, an idempotent handler applies it once, and the stream keeps flowing.
func TestDuplicateDelivery(t *testing.T, h Harness, f Features) {
	ctx := context.Background()
	var applied atomic.Int32
	seen := map[string]bool{}
	rec := newRecorder(f)
	rec.fail = func(ev *cloudevent.Event, delivery int) error {
		// Called under rec.mu: the map needs no lock of its own.
		if !seen[ev.ID] {
			seen[ev.ID] = true
			applied.Add(1)
		}
		return nil
	}
	stop := h.Consume("", rec.handle)
	defer stop()

	dup := NewEvent(1)
	for range 2 {
		if err := h.Transport().Send(ctx, []*cloudevent.Event{dup.Clone()}); err != nil {
			t.Fatalf("Send of a duplicate id: %v", err)
		}
	}
	after := NewEvent(2)
	if err := h.Transport().Send(ctx, []*cloudevent.Event{after}); err != nil {
		t.Fatalf("Send after the duplicate: %v", err)
	}
	rec.waitIDs(t, "the duplicate and the event after it", []*cloudevent.Event{dup, after})
	if got := applied.Load(); got != 2 {
		t.Fatalf("idempotent handler applied %d distinct events, want 2", got)
	}
}
