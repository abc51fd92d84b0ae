package streamtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// T1RoundTrip: publish, group read, the handler gets the same envelope, the entry is acked
// (R4.1 the group created at start, R4.2 the read loop, R4.4 XACK on success).
func T1RoundTrip(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	got := make(chan *cloudevent.Event, 1)
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	sent := NewEvent(t, "identity.user.erased", "user-u123")
	sent.SetCorrelationID("corr-1")
	Publish(t, h.Publisher(t, stream), sent)

	ev := recv(t, got, "the handler")
	checkSame(t, sent, ev)
	WaitPending(t, h, stream, cfg.Group, 0)
}

func checkSame(t *testing.T, want, got *cloudevent.Event) {
	t.Helper()
	switch {
	case got.ID != want.ID, got.Type != want.Type, got.Source != want.Source, got.Subject != want.Subject:
		t.Fatalf("attributes differ:\n got %+v\nwant %+v", got, want)
	case !got.Time.Equal(want.Time):
		t.Fatalf("time: got %v, want %v", got.Time, want.Time)
	case got.TenantID() != want.TenantID(), got.Actor() != want.Actor(), got.CorrelationID() != want.CorrelationID():
		t.Fatalf("extensions: got %v, want %v", got.Extensions, want.Extensions)
	case !bytes.Equal(got.Data, want.Data):
		t.Fatalf("data: got %s, want %s", got.Data, want.Data)
	}
}

// T1HandWrittenEntry: an entry written by hand exactly as in seed 000 (the seven R2
// fields, no source) is decoded and handled.
func T1HandWrittenEntry(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	got := make(chan *cloudevent.Event, 1)
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	id := cloudevent.NewID()
	if err := h.Append(context.Background(), stream,
		"type", "identity.user.erased",
		"event_id", id,
		"occurred_at", "2026-05-14T12:34:56Z",
		"tenant_id", "tenant-A",
		"subject_id", "user-u123",
		"actor", "system",
		"data", `{"erasure_id":"ERS-2026-05-14-abc12345"}`,
	); err != nil {
		t.Fatalf("Append: %v", err)
	}
	ev := recv(t, got, "the handler")
	if ev.ID != id || ev.Type != "identity.user.erased" || ev.TenantID() != "tenant-A" ||
		ev.Subject != "user-u123" || ev.Actor() != "system" || ev.Source != cfg.DefaultSource ||
		string(ev.Data) != `{"erasure_id":"ERS-2026-05-14-abc12345"}` {
		t.Fatalf("decoded %+v", ev)
	}
	WaitPending(t, h, stream, cfg.Group, 0)
}

// T2Idempotency: the same event delivered twice runs the handler twice and changes
// business state once; with the R5 store the second delivery is skipped (R4.3, E3: the
// consumer deduplicates by event id).
func T2Idempotency(t *testing.T, h Harness) {
	t.Run("IdempotentHandler", func(t *testing.T) {
		stream := testenv.Name(t)
		var mu sync.Mutex
		calls, changes := 0, 0
		erased := map[string]bool{}
		done := make(chan struct{}, 2)
		StartConsumer(t, h, FastConfig(t, h, stream), func(_ context.Context, ev *cloudevent.Event) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if !erased[ev.Subject] { // erasure is naturally idempotent
				erased[ev.Subject] = true
				changes++
			}
			done <- struct{}{}
			return nil
		})
		ev := NewEvent(t, "identity.user.erased", "user-1")
		tr := h.Publisher(t, stream)
		Publish(t, tr, ev)
		Publish(t, tr, ev)
		recv(t, done, "first delivery")
		recv(t, done, "second delivery")
		mu.Lock()
		defer mu.Unlock()
		if calls != 2 || changes != 1 {
			t.Fatalf("handler calls %d (want 2), state changes %d (want 1)", calls, changes)
		}
	})
	t.Run("Store", func(t *testing.T) {
		if h.Idempotency == nil {
			t.Skip("backend offers no idempotency store")
		}
		stream := testenv.Name(t)
		cfg := FastConfig(t, h, stream)
		cfg.Idempotency = h.Idempotency(t)
		var calls atomic.Int32
		seen := make(chan string, 4)
		StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
			calls.Add(1)
			seen <- ev.ID
			return nil
		})
		dup := NewEvent(t, "identity.user.erased", "user-1")
		marker := NewEvent(t, "identity.user.erased", "user-2")
		tr := h.Publisher(t, stream)
		Publish(t, tr, dup)
		Publish(t, tr, dup, marker)
		if got := recv(t, seen, "first delivery"); got != dup.ID {
			t.Fatalf("first delivery %s, want %s", got, dup.ID)
		}
		if got := recv(t, seen, "marker"); got != marker.ID {
			t.Fatalf("second handled event %s, want the marker %s (duplicate not skipped)", got, marker.ID)
		}
		WaitPending(t, h, stream, cfg.Group, 0)
		if n := calls.Load(); n != 2 {
			t.Fatalf("handler calls %d, want 2 (duplicate skipped)", n)
		}
	})
}

// T3RetryAfterClaim: a failed entry stays pending, is claimed after the idle time and
// the second attempt runs (R4.5).
func T3RetryAfterClaim(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	attempts := make(chan int, 4)
	var n atomic.Int32
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		k := int(n.Add(1))
		attempts <- k
		if k == 1 {
			return errors.New("transient failure")
		}
		return nil
	})
	Publish(t, h.Publisher(t, stream), NewEvent(t, "user.created", "u1"))
	recv(t, attempts, "first attempt")
	if got := recv(t, attempts, "second attempt after claim"); got != 2 {
		t.Fatalf("attempt %d, want 2", got)
	}
	WaitPending(t, h, stream, cfg.Group, 0)
	if es, _ := h.Range(context.Background(), cfg.DLQStream); len(es) != 0 {
		t.Fatalf("DLQ holds %d entries, want 0", len(es))
	}
}

// T4DeadLetter: a handler that always fails runs MaxDeliveries (3) times; the entry then
// sits in "<stream>:dlq" with its fields, the error and the provenance, and is no
// longer pending (R4.6).
func T4DeadLetter(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	var calls atomic.Int32
	StartConsumer(t, h, cfg, func(context.Context, *cloudevent.Event) error {
		return fmt.Errorf("permanent failure #%d", calls.Add(1))
	})
	ev := NewEvent(t, "user.deleted", "u1")
	Publish(t, h.Publisher(t, stream), ev)

	dlq := WaitLen(t, h, h.DLQ(stream), 1)
	WaitPending(t, h, stream, cfg.Group, 0)
	if n := calls.Load(); n != 3 {
		t.Fatalf("handler ran %d times, want 3", n)
	}
	d := dlq[0]
	want := map[string]string{
		"event_id": ev.ID, "type": ev.Type, "tenant_id": "tenant-A",
		streams.FieldError: "permanent failure #3", streams.FieldDeliveryCount: "3",
		streams.FieldSourceStream: stream, streams.FieldGroup: cfg.Group,
		streams.FieldReason: streams.ReasonMaxDeliveries,
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("DLQ field %s = %q, want %q (entry %v)", k, d[k], v, d)
		}
	}
	if d[streams.FieldOriginalID] == "" {
		t.Errorf("DLQ entry lacks %s: %v", streams.FieldOriginalID, d)
	}
	if len(dlq) != 1 {
		t.Fatalf("DLQ holds %d entries, want 1", len(dlq))
	}
}

// T5ConcurrentConsumers: two consumers of one group share the entries; each entry is
// processed exactly once across both.
func T5ConcurrentConsumers(t *testing.T, h Harness) {
	const total = 100
	stream := testenv.Name(t)
	base := FastConfig(t, h, stream)
	base.Count = 5

	var mu sync.Mutex
	count := map[string]int{}
	per := map[string]int{}
	handled := make(chan struct{}, total*2)
	// Each consumer's first handler call waits (bounded) until the other consumer has
	// also started one, so the test proves the work is shared without timing.
	firstA, firstB := make(chan struct{}), make(chan struct{})
	var onceA, onceB sync.Once
	mk := func(name string, mine *sync.Once, myCh, otherCh chan struct{}) func(context.Context, *cloudevent.Event) error {
		return func(_ context.Context, ev *cloudevent.Event) error {
			first := false
			mine.Do(func() { close(myCh); first = true })
			if first {
				select {
				case <-otherCh:
				case <-time.After(10 * time.Second):
				}
			}
			mu.Lock()
			count[ev.ID]++
			per[name]++
			mu.Unlock()
			handled <- struct{}{}
			return nil
		}
	}
	a, b := base, base
	a.Consumer, b.Consumer = "a", "b"
	StartConsumer(t, h, a, mk("a", &onceA, firstA, firstB))
	StartConsumer(t, h, b, mk("b", &onceB, firstB, firstA))

	tr := h.Publisher(t, stream)
	for i := 0; i < total; i++ {
		Publish(t, tr, NewEvent(t, "user.updated", fmt.Sprintf("u%d", i)))
	}
	for i := 0; i < total; i++ {
		recv(t, handled, fmt.Sprintf("event %d of %d", i+1, total))
	}
	WaitPending(t, h, stream, base.Group, 0)
	mu.Lock()
	defer mu.Unlock()
	for id, n := range count {
		if n != 1 {
			t.Errorf("event %s processed %d times", id, n)
		}
	}
	if len(count) != total || per["a"] == 0 || per["b"] == 0 {
		t.Fatalf("published %d, distinct handled %d, per consumer %v: want all, shared by both", total, len(count), per)
	}
}
