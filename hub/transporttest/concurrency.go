package transporttest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/koder/eventhub/cloudevent"
)

// TestConcurrentPublishers has N goroutines send M events each through the one
// transport (Send is called concurrently) and checks that every event arrives.
func TestConcurrentPublishers(t *testing.T, h Harness, f Features) {
	publishers, perPublisher := 8, 50
	if testing.Short() {
		publishers, perPublisher = 4, 10
	}
	rec := newRecorder(f)
	stop := h.Consume("", rec.handle)
	defer stop()

	all := make([][]*cloudevent.Event, publishers)
	errs := make(chan error, publishers)
	var wg sync.WaitGroup
	for p := range publishers {
		all[p] = NewEvents(perPublisher)
		wg.Go(func() {
			for i, ev := range all[p] {
				batch := []*cloudevent.Event{ev}
				if err := h.Transport().Send(context.Background(), batch); err != nil {
					errs <- fmt.Errorf("publisher %d, event %d: %w", p, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Send: %v", err)
	}
	var sent []*cloudevent.Event
	for _, evs := range all {
		sent = append(sent, evs...)
	}
	got := rec.waitUntil(t, fmt.Sprintf("%d events from %d publishers", len(sent), publishers), func(evs []*cloudevent.Event) bool {
		return len(missing(sent, evs)) == 0
	})
	if m := missing(sent, got); len(m) > 0 {
		t.Fatalf("published %d, handled %d distinct, missing %d", len(sent), len(sent)-len(m), len(m))
	}
}

// TestBatch sends one batch of exactly MaxBatch events and one of MaxBatch+1 (with no
// declared limit: 500 and 501) and checks every event arrives, in order when Ordered.
func TestBatch(t *testing.T, h Harness, f Features) {
	n := f.MaxBatch
	if n <= 0 {
		n = 500
	}
	rec := newRecorder(f)
	stop := h.Consume("", rec.handle)
	defer stop()
	at, over := NewEvents(n), NewEvents(n+1)
	for _, batch := range [][]*cloudevent.Event{at, over} {
		if err := h.Transport().Send(context.Background(), batch); err != nil {
			t.Fatalf("Send(batch of %d, MaxBatch %d): %v", len(batch), f.MaxBatch, err)
		}
	}
	sent := append(append([]*cloudevent.Event(nil), at...), over...)
	got := rec.waitIDs(t, fmt.Sprintf("batches of %d and %d", n, n+1), sent)
	if f.Ordered {
		checkOrder(t, sent, got)
	}
}

// TestConsumerGroups starts two consumers in one group and checks each event is handled
// by exactly one of them (T5), then checks a second group receives every event too.
func TestConsumerGroups(t *testing.T, h Harness, f Features) {
	if !f.ConsumerGroups {
		t.Skip("transport has no consumer groups (Features.ConsumerGroups is false)")
	}
	const n = 40
	shared := newRecorder(f)
	stopA := h.Consume("group-a", shared.handle)
	defer stopA()
	stopB := h.Consume("group-a", shared.handle)
	defer stopB()
	other := newRecorder(f)
	stopC := h.Consume("group-b", other.handle)
	defer stopC()

	sent := NewEvents(n)
	if err := h.Transport().Send(context.Background(), sent); err != nil {
		t.Fatalf("Send: %v", err)
	}
	shared.waitIDs(t, "group-a to handle every event", sent)
	other.waitIDs(t, "group-b to handle every event", sent)
	for _, ev := range sent {
		if d := shared.deliveries(ev.ID); d != 1 {
			t.Errorf("event %s handled %d times within one group, want 1", ev.ID, d)
		}
	}
}
