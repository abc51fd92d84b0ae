package streamtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/streams"
	"github.com/koder/eventhub/internal/testenv"
)

// T1RoundTrip: publish, group read, the handler gets the same envelope, the entry is acked.
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
// business state once; with the R5 store the second delivery is skipped.
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
// the second attempt runs.
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
// longer pending.
func T4DeadLetter(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	var calls atomic.Int32
	StartConsumer(t, h, cfg, func(context.Context, *cloudevent.Event) error {
		return fmt.Errorf("permanent failure #%d", calls.Add(1))
	})
	ev := NewEvent(t, "user.deleted", "u1")
	Publish(t, h.Publisher(t, stream), ev)

	dlq := WaitLen(t, h, stream+streams.DLQSuffix, 1)
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

// N2Malformed: an entry missing a mandatory field goes to the DLQ at once, with the
// reason; the handler never sees it and the consumer carries on.
func N2Malformed(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	got := make(chan *cloudevent.Event, 2)
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	bad := cloudevent.NewID()
	if err := h.Append(context.Background(), stream,
		"type", "identity.user.erased", "event_id", bad, "occurred_at", "2026-05-14T12:34:56Z",
		"subject_id", "user-u123", "actor", "system", "data", `{}`); err != nil { // no tenant_id
		t.Fatalf("Append: %v", err)
	}
	good := NewEvent(t, "identity.user.erased", "user-ok")
	Publish(t, h.Publisher(t, stream), good)

	if ev := recv(t, got, "the valid event after the malformed one"); ev.ID != good.ID {
		t.Fatalf("handler got %s, want %s", ev.ID, good.ID)
	}
	dlq := WaitLen(t, h, cfg.DLQStream, 1)
	d := dlq[0]
	if d["event_id"] != bad || d[streams.FieldReason] != streams.ReasonMalformed ||
		!strings.Contains(d[streams.FieldError], "tenant") || d[streams.FieldDeliveryCount] != "1" {
		t.Fatalf("DLQ entry %v: want event %s, reason %s, an error naming tenant_id, 1 delivery", d, bad, streams.ReasonMalformed)
	}
	WaitPending(t, h, stream, cfg.Group, 0)
	select {
	case ev := <-got:
		t.Fatalf("handler got an unexpected event %s", ev.ID)
	default:
	}
}

type majorOne struct{}

func (majorOne) CheckVersion(ev *cloudevent.Event) error {
	if v := ev.DataVersion(); v != "" && !strings.HasPrefix(v, "1.") {
		return fmt.Errorf("unknown MAJOR version %q of %s", v, ev.Type)
	}
	return nil
}

// E5UnknownMajor: an event of an unknown MAJOR payload version goes to the DLQ at once.
func E5UnknownMajor(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	cfg.Versions = majorOne{}
	got := make(chan *cloudevent.Event, 2)
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	v2 := NewEvent(t, "user.created", "u1").SetDataVersion("2.0.0")
	v1 := NewEvent(t, "user.created", "u2").SetDataVersion("1.4.0")
	Publish(t, h.Publisher(t, stream), v2, v1)
	if ev := recv(t, got, "the 1.x event"); ev.ID != v1.ID {
		t.Fatalf("handler got %s, want %s", ev.ID, v1.ID)
	}
	d := WaitLen(t, h, cfg.DLQStream, 1)[0]
	if d["event_id"] != v2.ID || d[streams.FieldReason] != streams.ReasonUnknownVersion {
		t.Fatalf("DLQ entry %v, want %s with reason %s", d, v2.ID, streams.ReasonUnknownVersion)
	}
	WaitPending(t, h, stream, cfg.Group, 0)
}

// RestartRereadsOwnPending: entries a consumer read but never acked (it crashed) are
// handled when a consumer of the same name starts again, without waiting for a claim.
func RestartRereadsOwnPending(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	cfg.ClaimMinIdle = time.Hour // only the "0" re-read can deliver it
	ctx := testenv.Context(t, time.Minute)
	if err := h.Backend.CreateGroup(ctx, stream, cfg.Group, "0"); err != nil {
		t.Fatalf("CreateGroup: %v", err)
	}
	ev := NewEvent(t, "session.created", "s1")
	Publish(t, h.Publisher(t, stream), ev)
	if es, err := h.Backend.ReadGroup(ctx, stream, cfg.Group, cfg.Consumer, ">", 10, 0); err != nil || len(es) != 1 {
		t.Fatalf("crashed consumer's read: %d entries, %v", len(es), err)
	}
	got := make(chan *cloudevent.Event, 1)
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	if e := recv(t, got, "the re-read pending entry"); e.ID != ev.ID {
		t.Fatalf("got %s, want %s", e.ID, ev.ID)
	}
	WaitPending(t, h, stream, cfg.Group, 0)
}

// ClaimFromDeadConsumer: entries held by a consumer that died are claimed and processed
// by another consumer of the group.
func ClaimFromDeadConsumer(t *testing.T, h Harness) {
	const total = 20
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	ctx := testenv.Context(t, time.Minute)
	if err := h.Backend.CreateGroup(ctx, stream, cfg.Group, "0"); err != nil {
		t.Fatalf("CreateGroup: %v", err)
	}
	tr := h.Publisher(t, stream)
	for i := 0; i < total; i++ {
		Publish(t, tr, NewEvent(t, "session.revoked", fmt.Sprintf("s%d", i)))
	}
	held, err := h.Backend.ReadGroup(ctx, stream, cfg.Group, "dead", ">", total, 0)
	if err != nil || len(held) != total {
		t.Fatalf("dead consumer's read: %d entries, %v", len(held), err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	handled := make(chan struct{}, total)
	cfg.Consumer = "survivor"
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		mu.Lock()
		seen[ev.ID]++
		mu.Unlock()
		handled <- struct{}{}
		return nil
	})
	for i := 0; i < total; i++ {
		recv(t, handled, fmt.Sprintf("claimed entry %d of %d (held by the dead consumer: %d)", i+1, total, len(held)))
	}
	WaitPending(t, h, stream, cfg.Group, 0)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != total {
		t.Fatalf("held %d, handled %d distinct", total, len(seen))
	}
}

// CloseDrains: Close lets the in-flight handler finish and acks it; the consumer is
// closed for good afterwards.
func CloseDrains(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	c, err := streams.New(h.Backend, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close before Start: %v", err)
	}
	c, _ = streams.New(h.Backend, cfg)
	entered, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	if err := c.Start(context.Background(), func(ctx context.Context, ev *cloudevent.Event) error {
		close(entered)
		<-release
		finished.Store(true)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	Publish(t, h.Publisher(t, stream), NewEvent(t, "user.created", "u1"))
	recv(t, entered, "the handler to start")
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	close(release)
	if err := recv(t, closed, "Close"); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !finished.Load() {
		t.Fatal("Close returned before the in-flight handler finished")
	}
	WaitPending(t, h, stream, cfg.Group, 0)
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := c.Start(context.Background(), func(context.Context, *cloudevent.Event) error { return nil }); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

// ConcurrencyOption: with Concurrency 4, four handlers of one consumer run at once.
func ConcurrencyOption(t *testing.T, h Harness) {
	const parallel, total = 4, 8
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	cfg.Concurrency = parallel
	cfg.ClaimMinIdle = time.Minute // a held handler must not be claimed and run twice
	arrived := make(chan string, total)
	release := make(chan struct{})
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		arrived <- ev.ID
		<-release
		return nil
	})
	evs := make([]*cloudevent.Event, total)
	for i := range evs {
		evs[i] = NewEvent(t, "user.updated", fmt.Sprintf("u%d", i))
	}
	Publish(t, h.Publisher(t, stream), evs...)
	for i := 0; i < parallel; i++ {
		recv(t, arrived, fmt.Sprintf("handler %d of %d running at once", i+1, parallel))
	}
	close(release)
	for i := parallel; i < total; i++ {
		recv(t, arrived, fmt.Sprintf("event %d of %d", i+1, total))
	}
	WaitPending(t, h, stream, cfg.Group, 0)
}

// DeadLetterAfterCrashes: an entry whose consumers kept dying while holding it (its
// delivery count passed MaxDeliveries without any handler failing) is dead-lettered when
// claimed, without running the handler again.
func DeadLetterAfterCrashes(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	ctx := testenv.Context(t, time.Minute)
	if err := h.Backend.CreateGroup(ctx, stream, cfg.Group, "0"); err != nil {
		t.Fatalf("CreateGroup: %v", err)
	}
	ev := NewEvent(t, "user.deleted", "u1")
	Publish(t, h.Publisher(t, stream), ev)
	if es, err := h.Backend.ReadGroup(ctx, stream, cfg.Group, "crashed-0", ">", 1, 0); err != nil || len(es) != 1 {
		t.Fatalf("first crashed consumer's read: %d entries, %v", len(es), err)
	}
	for i := 1; i <= streams.DefaultMaxDeliveries; i++ {
		_, es, err := h.Backend.AutoClaim(ctx, stream, cfg.Group, fmt.Sprintf("crashed-%d", i), 0, "0-0", 10)
		if err != nil || len(es) != 1 || es[0].Deliveries != int64(i+1) {
			t.Fatalf("claim %d by a crashing consumer: %+v, %v (want delivery count %d)", i, es, err, i+1)
		}
	}
	var calls atomic.Int32
	StartConsumer(t, h, cfg, func(context.Context, *cloudevent.Event) error {
		calls.Add(1)
		return nil
	})
	d := WaitLen(t, h, cfg.DLQStream, 1)[0]
	WaitPending(t, h, stream, cfg.Group, 0)
	if d["event_id"] != ev.ID || d[streams.FieldReason] != streams.ReasonMaxDeliveries || d[streams.FieldDeliveryCount] != "5" {
		t.Fatalf("DLQ entry %v: want %s, reason %s, delivery_count 5", d, ev.ID, streams.ReasonMaxDeliveries)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("handler ran %d times for an entry past its delivery limit", n)
	}
}
