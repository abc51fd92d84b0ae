package webhook

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// TestConformance runs the shared transport suite on both ledger backends. The
// "stream" of a harness is one endpoint whose receiver (NewReceiver: verified, parsed)
// hands each event to the consumer; a failed handler answers 500 and the delivery is
// retried. Features: no order (parallel workers), persistent (a delivery waits in the
// ledger, retried until a consumer answers), no consumer groups (each endpoint gets
// every event; fan-out is by endpoint, not by group), redelivery, no batch limit.
func TestConformance(t *testing.T) {
	t.Parallel()
	features := transporttest.Features{
		Ordered: false, Persistent: true, ConsumerGroups: false, Redelivery: true,
		MaxBatch: 0, Normalize: nil,
	}
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		newH := func(t *testing.T) transporttest.Harness { return newHarness(t, b) }
		f := features
		if b == ledger.SQLite && raceEnabled {
			// Under -race, SQLite is ~15x slower: the Batch check's 1001 deliveries take
			// about 25 s, past the suite's default wait on a busy machine.
			f.Timeout = 3 * time.Minute
		}
		transporttest.Run(t, newH, f)
	})
}

type harness struct {
	t  *testing.T
	b  ledger.Backend
	tb *testBundle

	mu      sync.RWMutex // held for reading while a handler runs; stop takes it
	handler hub.Handler
}

func newHarness(t *testing.T, b ledger.Backend) *harness {
	cfg := testConfig()
	// Events sent before a consumer starts are refused (500) until it does: retry
	// often and long enough, and never let the breaker park them.
	cfg.RetrySchedule = make([]time.Duration, 100)
	for i := range cfg.RetrySchedule {
		cfg.RetrySchedule[i] = 100 * time.Millisecond
	}
	cfg.BreakerThreshold = 1 << 20
	h := &harness{t: t, b: b, tb: setupWith(t, b, cfg, ledger.Config{}, true)}
	ep := h.tb.endpoint(t, "/unused")
	rcv, err := NewReceiver(ReceiverConfig{Secrets: []string{ep.Secrets[0].Value}, Logger: ledgertest.Logger(t)}, h.handle)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	if _, err := h.tb.tr.UpdateEndpoint(h.tb.ctx, ep.ID, EndpointUpdate{URL: &srv.URL}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) handle(ctx context.Context, ev *cloudevent.Event) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.handler == nil {
		return hub.Errorf(hub.Unavailable, "no consumer yet")
	}
	return h.handler(ctx, ev)
}

func (h *harness) Transport() hub.Transport { return h.tb.tr }

func (h *harness) Consume(_ string, fn hub.Handler) func() {
	h.mu.Lock()
	h.handler = fn
	h.mu.Unlock()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			h.mu.Lock() // waits for running handlers
			h.handler = nil
			h.mu.Unlock()
		})
	}
	h.t.Cleanup(stop)
	return stop
}

// Unreachable is a transport whose ledger database is gone: for a webhook transport
// the "broker" Send talks to is the ledger, not the receiver (a receiver that is down
// is the retry schedule's business, not Send's).
func (h *harness) Unreachable() hub.Transport {
	ctx := context.Background()
	cfg := ledgertest.Config(h.t, ledger.SQLite, ledger.Config{})
	l, err := ledger.Open(ctx, cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	c := testConfig()
	c.NoWork = true
	tr, err := New(ctx, c, l)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		h.t.Fatal(err)
	}
	return tr
}
