package redisstream

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// confHarness is the transporttest Harness: a fresh stream per check on the test Redis.
type confHarness struct {
	t      testing.TB
	logger *slog.Logger
	client redis.UniversalClient
	stream string
	tr     *Transport

	mu    sync.Mutex
	group int
}

func newConfHarness(t testing.TB) transporttest.Harness {
	return newConfHarnessOn(t, newClient(t), testenv.Name(t))
}

// newConfHarnessOn is newConfHarness on client (one server or a cluster) and stream.
func newConfHarnessOn(t testing.TB, c redis.UniversalClient, stream string) transporttest.Harness {
	logger := testenv.Logger(t)
	if _, bench := t.(*testing.B); bench {
		logger = quiet // per-event debug records would be the benchmark
	}
	// The suite sends events without a subject (MinimalEvent, BinaryEvent): R2 needs
	// one, so the harness configures the default a deployment would.
	tr, err := New(c, Config{Stream: stream, DefaultSubject: conformanceSubject, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tr.Close()
		c.Del(context.Background(), stream, DLQStreamFor(c, stream))
	})
	return &confHarness{t: t, logger: logger, client: c, stream: stream, tr: tr}
}

func (h *confHarness) Transport() hub.Transport { return h.tr }

func (h *confHarness) Consume(group string, handler hub.Handler) func() {
	if group == "" {
		h.mu.Lock()
		h.group++
		group = "conformance-default-" + strconv.Itoa(h.group)
		h.mu.Unlock()
	}
	c, err := NewConsumer(h.client, streams.ConsumerConfig{
		Stream: h.stream, Group: group, Consumer: "c-" + strconv.FormatInt(time.Now().UnixNano(), 36), Start: "0",
		Block: 100 * time.Millisecond, ClaimMinIdle: time.Second, ClaimInterval: 50 * time.Millisecond,
		MaxDeliveries: 10, DrainTimeout: 5 * time.Second, Logger: h.logger,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := c.Start(context.Background(), handler); err != nil {
		h.t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { _ = c.Close() }) }
	h.t.Cleanup(stop)
	return stop
}

func (h *confHarness) Unreachable() hub.Transport {
	c := newNilClient()
	tr, err := New(c, Config{Stream: h.stream, DefaultSubject: conformanceSubject})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = tr.Close(); _ = c.Close() })
	return tr
}

// conformanceSubject is the harness transports' DefaultSubject.
const conformanceSubject = "transporttest-subject"

func TestConformance(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T) transporttest.Harness { return newConfHarness(t) }, transporttest.Features{
		Ordered:        true,
		Persistent:     true,
		ConsumerGroups: true,
		Redelivery:     true,
		MaxBatch:       0,
		Normalize:      nil,
	})
}

// BenchmarkConformance is the benchmark every transport shares (send_1, send_batch,
// end_to_end), for comparing transports with each other.
func BenchmarkConformance(b *testing.B) {
	transporttest.Bench(b, func(b *testing.B) transporttest.Harness { return newConfHarness(b) })
}
