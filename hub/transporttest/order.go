package transporttest

import (
	"context"
	"testing"

	"github.com/koder/eventhub/cloudevent"
)

// TestOrder sends events one Send at a time and then as one batch, and checks a single
// consumer receives them in send order (redeliveries aside: only first arrivals count).
func TestOrder(t *testing.T, h Harness, f Features) {
	if !f.Ordered {
		t.Skip("transport does not guarantee order (Features.Ordered is false)")
	}
	const singles, batched = 30, 30
	rec := newRecorder(f)
	stop := h.Consume("", rec.handle)
	defer stop()

	sent := NewEvents(singles + batched)
	ctx := context.Background()
	for _, ev := range sent[:singles] {
		if err := h.Transport().Send(ctx, []*cloudevent.Event{ev}); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	if err := h.Transport().Send(ctx, sent[singles:]); err != nil {
		t.Fatalf("Send(batch): %v", err)
	}
	got := rec.waitIDs(t, "all ordered events", sent)
	checkOrder(t, sent, got)
}

// checkOrder fails t unless the first arrival of each sent event follows send order.
func checkOrder(t *testing.T, sent, got []*cloudevent.Event) {
	t.Helper()
	pos := make(map[string]int, len(sent))
	for i, ev := range sent {
		pos[ev.ID] = i
	}
	seen := map[string]bool{}
	last := -1
	for _, ev := range got {
		p, ok := pos[ev.ID]
		if !ok || seen[ev.ID] {
			continue
		}
		seen[ev.ID] = true
		if p < last {
			t.Fatalf("out of order: event #%d (%s) arrived after #%d", p, ev.ID, last)
		}
		last = p
	}
}

// TestPersistence sends events before any consumer exists and checks a consumer started
// afterwards receives them.
func TestPersistence(t *testing.T, h Harness, f Features) {
	if !f.Persistent {
		t.Skip("transport does not keep events for consumers that start later (Features.Persistent is false)")
	}
	sent := NewEvents(5)
	if err := h.Transport().Send(context.Background(), sent); err != nil {
		t.Fatalf("Send: %v", err)
	}
	rec := newRecorder(f)
	stop := h.Consume("", rec.handle)
	defer stop()
	rec.waitIDs(t, "events sent before the consumer started", sent)
}
