package streamtest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	streamloop "github.com/koder/eventhub/internal/streams"
	"github.com/koder/eventhub/internal/testenv"
)

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
	c, err := streamloop.New(h.Backend, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close before Start: %v", err)
	}
	c, _ = streamloop.New(h.Backend, cfg)
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
