package memtransport_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
)

// harness is the memtransport Harness: one Broker per test, a stream named after it.
type harness struct {
	tb     testing.TB
	broker *memtransport.Broker
	stream string
	tr     *memtransport.Transport

	mu    sync.Mutex
	group int
}

func newHarness(tb testing.TB) *harness {
	b := memtransport.NewBroker()
	stream := testenv.Name(tb)
	tr, err := memtransport.New(b, memtransport.Config{Stream: stream})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tr.Close(); b.Close() })
	return &harness{tb: tb, broker: b, stream: stream, tr: tr}
}

func (h *harness) Transport() hub.Transport { return h.tr }

func (h *harness) Consume(group string, handler hub.Handler) func() {
	if group == "" {
		// A private group per consumer, as the harness's default.
		h.mu.Lock()
		h.group++
		group = h.stream + "-default-" + strconv.Itoa(h.group)
		h.mu.Unlock()
	}
	c, err := memtransport.NewConsumer(h.broker, memtransport.ConsumerConfig{
		Stream: h.stream, Group: group, RedeliveryDelay: 5 * time.Millisecond, DrainTimeout: 2 * time.Second,
	})
	if err != nil {
		h.tb.Fatal(err)
	}
	if err := c.Start(context.Background(), handler); err != nil {
		h.tb.Fatal(err)
	}
	h.tb.Cleanup(func() { c.Close() })
	return func() { c.Close() }
}

func (h *harness) Unreachable() hub.Transport {
	gone := memtransport.NewBroker()
	gone.Close()
	tr, err := memtransport.New(gone, memtransport.Config{Stream: h.stream})
	if err != nil {
		h.tb.Fatal(err)
	}
	return tr
}

func TestConformance(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T) transporttest.Harness { return newHarness(t) }, transporttest.Features{
		Ordered:        true,
		Persistent:     true,
		ConsumerGroups: true,
		Redelivery:     true,
		MaxBatch:       0,
		Normalize:      nil,
	})
}

func BenchmarkTransport(b *testing.B) {
	transporttest.Bench(b, func(b *testing.B) transporttest.Harness { return newHarness(b) })
}
