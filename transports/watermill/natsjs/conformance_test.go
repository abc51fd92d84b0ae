package natsjs

import (
	"context"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
)

// TestWM_NATSConformance runs the transport suite on NATS JetStream through the
// Watermill adapter (watermill-nats in JetStream mode underneath).
func TestWM_NATSConformance(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T) transporttest.Harness { return newHarness(t) }, transporttest.Features{
		Ordered:        true, // one push consumer, one handler at a time: stream order
		Persistent:     true, // the stream keeps events; a new durable starts at the first
		ConsumerGroups: true, // a durable per group, its members a queue group
		Redelivery:     true, // a delayed nak; JetStream counts the deliveries
		MaxBatch:       0,    // no limit: watermill-nats publishes one acknowledged message after the other
		Normalize:      nil,  // lossless: ce- headers, the type list and percent-encoding where needed
	})
}

type harness struct {
	t  testing.TB
	b  *testBundle
	tr *Transport
}

func newHarness(t testing.TB) *harness {
	b := setup(t)
	return &harness{t: t, b: b, tr: newTransport(t, b.config())}
}

func (h *harness) Transport() hub.Transport { return h.tr }

func (h *harness) Consume(group string, handler hub.Handler) func() {
	cfg := h.b.config()
	cfg.Durable = "default"
	if group != "" {
		cfg.Durable = "g_" + group
	}
	cfg.MaxDeliveries = 10
	c := newConsumer(h.t, cfg)
	if err := c.Start(context.Background(), handler); err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	return func() { _ = c.Close() }
}

func (h *harness) Unreachable() hub.Transport {
	cfg := h.b.config()
	cfg.URL = "nats://127.0.0.1:1"
	cfg.ConnectInBackground = true
	cfg.ConnectTimeout = time.Second
	return newTransport(h.t, cfg)
}

func BenchmarkConformance(b *testing.B) {
	transporttest.Bench(b, func(b *testing.B) transporttest.Harness { return newHarness(b) })
}
