package hub_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/internal/testenv"
)

// testBundle is what most hub tests touch.
type testBundle struct {
	hub    *hub.Hub
	broker *memtransport.Broker
	stream string
	mem    *memtransport.Transport
}

// setup returns a Hub with fast retries and a memtransport on a fresh stream, closed at
// cleanup.
func setup(t *testing.T, opts ...hub.Option) *testBundle {
	t.Helper()
	b := memtransport.NewBroker()
	stream := testenv.Name(t)
	mem, err := memtransport.New(b, memtransport.Config{Stream: stream, Name: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]hub.Option{hub.WithLogger(slog.New(slog.DiscardHandler)), hub.WithCloseTimeout(10 * time.Second)}, opts...)
	h, err := hub.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(); mem.Close(); b.Close() })
	return &testBundle{hub: h, broker: b, stream: stream, mem: mem}
}

// fastRetry keeps retry tests quick.
var fastRetry = hub.WithRetry(3, time.Millisecond, 5*time.Millisecond)

// event returns a valid event of typ for tenant t1.
func event(typ string) *cloudevent.Event {
	ev := cloudevent.New("/test", typ)
	ev.SetExtension(cloudevent.ExtTenantID, "t1")
	_ = ev.SetData("", map[string]any{"user_id": "usr_1"})
	return ev
}

// sendFunc is a Transport made of a function.
type sendFunc func(ctx context.Context, batch []*cloudevent.Event) error

func (f sendFunc) Send(ctx context.Context, batch []*cloudevent.Event) error { return f(ctx, batch) }
func (f sendFunc) Close() error                                              { return nil }

// collector is a Handler that records events and signals each one.
type collector struct {
	mu  sync.Mutex
	evs []*cloudevent.Event
	ch  chan *cloudevent.Event
}

func newCollector() *collector { return &collector{ch: make(chan *cloudevent.Event, 1000)} }

func (c *collector) handle(_ context.Context, ev *cloudevent.Event) error {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	c.mu.Unlock()
	c.ch <- ev
	return nil
}

// next waits for the next event.
func (c *collector) next(t *testing.T) *cloudevent.Event {
	t.Helper()
	select {
	case ev := <-c.ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for an event")
		return nil
	}
}

func (c *collector) all() []*cloudevent.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*cloudevent.Event(nil), c.evs...)
}
