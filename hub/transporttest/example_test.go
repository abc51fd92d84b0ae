package transporttest_test

import (
	"context"
	"testing"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
)

// memHarness is the shape of a transport's harness: a fresh stream per test, consumers
// on it, an unreachable twin, all cleaned up on t.
type memHarness struct {
	t      testing.TB
	broker *memtransport.Broker
	stream string
	tr     *memtransport.Transport
}

func newMemHarness(t testing.TB) transporttest.Harness {
	b := memtransport.NewBroker()
	stream := testenv.Name(t)
	tr, _ := memtransport.New(b, memtransport.Config{Stream: stream})
	t.Cleanup(func() { tr.Close(); b.Close() })
	return &memHarness{t: t, broker: b, stream: stream, tr: tr}
}

func (h *memHarness) Transport() hub.Transport { return h.tr }

func (h *memHarness) Consume(group string, handler hub.Handler) func() {
	if group == "" {
		group = testenv.Name(h.t)
	}
	c, err := memtransport.NewConsumer(h.broker, memtransport.ConsumerConfig{Stream: h.stream, Group: group})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := c.Start(context.Background(), handler); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	return func() { c.Close() }
}

func (h *memHarness) Unreachable() hub.Transport {
	gone := memtransport.NewBroker()
	gone.Close()
	tr, _ := memtransport.New(gone, memtransport.Config{Stream: h.stream})
	return tr
}

// A transport's conformance_test.go: one Run with every Features field written out.
func ExampleRun() {
	_ = func(t *testing.T) {
		transporttest.Run(t, func(t *testing.T) transporttest.Harness { return newMemHarness(t) }, transporttest.Features{
			Ordered:        true,
			Persistent:     true,
			ConsumerGroups: true,
			Redelivery:     true,
			MaxBatch:       0,
			Normalize:      nil,
		})
	}
}

// One check alone, for example while fixing it.
func ExampleTestRoundTrip() {
	_ = func(t *testing.T) {
		transporttest.TestRoundTrip(t, newMemHarness(t), transporttest.Features{})
	}
}

// The shared benchmark.
func ExampleBench() {
	_ = func(b *testing.B) {
		transporttest.Bench(b, func(b *testing.B) transporttest.Harness { return newMemHarness(b) })
	}
}

// TestExampleHarness runs the suite on the example harness, so the example stays true.
func TestExampleHarness(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T) transporttest.Harness { return newMemHarness(t) }, transporttest.Features{
		Ordered: true, Persistent: true, ConsumerGroups: true, Redelivery: true, MaxBatch: 0, Normalize: nil,
	})
}
