package rabbitmq

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T) transporttest.Harness { return newHarness(t) }, transporttest.Features{
		Ordered:        true, // one queue, Concurrency 1: FIFO (a redelivered event comes later)
		Persistent:     true, // durable queue declared with the group
		ConsumerGroups: true, // one queue per group, competing consumers within it
		Redelivery:     true, // delayed, through the retry queue
		MaxBatch:       0,    // no limit: a batch is streamed within the in-flight window
		Normalize:      nil,  // lossless: every extension type survives
	})
}

// harness gives each check its own exchange; the default group's queue is declared
// up front so events sent before a consumer starts are kept (Persistent).
type harness struct {
	t  testing.TB
	b  *testBundle
	tr *Transport

	mu     sync.Mutex
	groups map[string]bool
}

func newHarness(t testing.TB) *harness {
	b := setup(t)
	h := &harness{t: t, b: b, groups: map[string]bool{}}
	cfg := b.config(t)
	cfg.Logger = nil // the suite's volume would flood the test log
	newConsumer(t, cfg).Close()
	h.tr = newTransport(t, cfg)
	return h
}

func (h *harness) Transport() hub.Transport { return h.tr }

func (h *harness) Consume(group string, handler hub.Handler) func() {
	cfg := h.b.config(h.t)
	cfg.Logger = nil
	if group != "" {
		cfg.Queue = h.b.queue + "." + group
		h.mu.Lock()
		if !h.groups[group] {
			h.groups[group] = true
			q := cfg.Queue
			h.t.Cleanup(func() {
				for _, n := range []string{q, q + ".retry", DLQName(q)} {
					_, _ = h.b.admin.QueueDelete(n, false, false, false)
				}
			})
		}
		h.mu.Unlock()
	}
	c := newConsumer(h.t, cfg)
	if err := c.Start(context.Background(), handler); err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	return func() { _ = c.Close() }
}

func (h *harness) Unreachable() hub.Transport {
	cfg := h.b.config(h.t)
	cfg.URL = "amqp://guest:guest@127.0.0.1:1/"
	cfg.ConnectInBackground = true
	cfg.DialTimeout = time.Second
	return newTransport(h.t, cfg)
}

func BenchmarkConformance(b *testing.B) {
	transporttest.Bench(b, func(b *testing.B) transporttest.Harness { return newHarness(b) })
}
