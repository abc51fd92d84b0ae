package webhook

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// replica opens a second ledger on tb's database (same PostgreSQL schema) with its own
// transport and workers: another hub process sharing the ledger.
func (tb *testBundle) replica(t *testing.T, cfg Config) *Transport {
	t.Helper()
	lc := tb.l.Config()
	lc.NoMigrate = true
	l, err := ledger.Open(tb.ctx, lc)
	if err != nil {
		t.Fatalf("replica ledger: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	cfg.Registerer = prometheus.NewRegistry()
	cfg.Logger = ledgertest.Logger(t)
	tr, err := New(tb.ctx, cfg, l)
	if err != nil {
		t.Fatalf("replica transport: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if err := l.Start(tb.ctx); err != nil {
		t.Fatalf("replica start: %v", err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = l.Stop(sctx)
	})
	return tr
}

// TestDC_RateLimitAcrossReplicas: two processes on one ledger deliver to a limited
// endpoint; the receiver never sees more than RPS + Burst requests in any one-second
// window, and no delivery spends more than its one attempt waiting for its turn.
func TestDC_RateLimitAcrossReplicas(t *testing.T) {
	t.Parallel()
	const rps, burst, events = 5, 3, 20
	tb := setup(t, ledger.Postgres, nil)
	tb.replica(t, testConfig())
	ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/limited"), Patterns: []string{"#"},
		Controls: Controls{RateLimit: RateLimit{RPS: rps, Burst: burst}}})
	if err != nil {
		t.Fatal(err)
	}
	for range events {
		tb.send(t, newEvent(t, "user.created"))
	}
	ds := tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, events, DeliveryDelivered)
	for _, d := range ds {
		if d.Attempt != 1 {
			t.Errorf("delivery %d: attempt %d, want 1 (waiting for the limit spends none)", d.ID, d.Attempt)
		}
	}
	var at []time.Time
	for _, r := range tb.recv.requests() {
		at = append(at, r.at)
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	if len(at) != events {
		t.Fatalf("receiver got %d requests, want %d", len(at), events)
	}
	for i := range at {
		n := 0
		for j := i; j < len(at) && at[j].Sub(at[i]) <= time.Second; j++ {
			n++
		}
		if n > rps+burst {
			t.Fatalf("%d requests in the second from request %d, limit %d + burst %d", n, i, rps, burst)
		}
	}
	rs, err := tb.tr.RateState(tb.ctx, ep.ID)
	if err != nil || rs.Limit.RPS != rps || rs.NextFreeAt.IsZero() {
		t.Fatalf("RateState = %+v, %v", rs, err)
	}
}

func TestDC_RateLimitValidation(t *testing.T) {
	t.Parallel()
	for _, rl := range []RateLimit{{RPS: -1}, {RPS: MaxRPS + 1}, {Burst: 2}, {RPS: 1, Burst: -1}} {
		c := Controls{RateLimit: rl}
		if _, err := c.compile(); hub.Code(err) != hub.InvalidArgument {
			t.Errorf("%+v: got %v, want InvalidArgument", rl, err)
		}
	}
}

// TestDC_RateLimitOnTheDatabaseClock: the limiter decides on the database's clock, so a
// replica whose own clock is an hour ahead (or behind) gets no extra slot and no
// hour-long wait: at 1 request per second, the second request of two replicas waits
// about a second whatever their clocks say.
func TestDC_RateLimitOnTheDatabaseClock(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, func(c *Config) { c.NoWork = true })
		ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/limited"), Patterns: []string{"#"},
			Controls: Controls{RateLimit: RateLimit{RPS: 1, Burst: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if wait, err := tb.tr.admitRate(tb.ctx, ep, nil, time.Now()); err != nil || wait != 0 {
			t.Fatalf("first request: wait %s, %v; want none", wait, err)
		}
		for _, skew := range []time.Duration{time.Hour, -time.Hour} {
			wait, err := tb.tr.admitRate(tb.ctx, ep, nil, time.Now().Add(skew))
			if err != nil {
				t.Fatal(err)
			}
			if wait < 500*time.Millisecond || wait > 3*time.Second {
				t.Errorf("a replica %s off: wait %s; want about a second per slot already taken (the database's clock)", skew, wait)
			}
		}
	})
}
