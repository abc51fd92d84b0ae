package webhook

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// In-flight caps (Controls.MaxInFlight, Config.MaxInFlightPerEndpoint): at most N
// requests to one endpoint open at once in this process. Without a cap a receiver that
// answers slowly can hold every one of the Workers, and every other endpoint's
// deliveries, other tenants' included, wait behind it; with one, it holds at most N.
//
// A delivery that finds its endpoint full waits up to inflightWait for a slot (the
// usual case under a steady load: a request ends and the next begins), then is
// deferred (JobSnooze: no attempt spent) for a delay that doubles with each deferral
// of that delivery, from inflightDefer to inflightDeferMax, with jitter: a backlog
// queued behind a slow endpoint then costs a few fetches per delivery, not a fetch
// loop. The cap is per process (each replica has its own Workers); N replicas open at
// most N times the cap. River's open-source queue has no per-key concurrency of its
// own (River Pro does), hence this semaphore.

const (
	// MaxInFlight bounds the cap's setting.
	MaxInFlight = 10_000

	inflightWait     = 250 * time.Millisecond
	inflightDefer    = 500 * time.Millisecond
	inflightDeferMax = 30 * time.Second

	metaInflightDeferrals = "inflight_deferrals" // how often this delivery found its endpoint full
)

// slotTable holds a semaphore per capped endpoint. A change of an endpoint's cap
// makes a new semaphore; requests holding a slot of the old one release it there.
type slotTable struct {
	mu sync.Mutex
	m  map[string]*slots
}

type slots struct {
	cap int
	ch  chan struct{}
}

func (s *slotTable) get(endpoint string, capacity int) *slots {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sl := s.m[endpoint]; sl != nil && sl.cap == capacity {
		return sl
	}
	if s.m == nil {
		s.m = map[string]*slots{}
	}
	sl := &slots{cap: capacity, ch: make(chan struct{}, capacity)}
	s.m[endpoint] = sl
	return sl
}

// inflightCap is ep's cap in this process, 0 for none.
func (t *Transport) inflightCap(ep *Endpoint) int {
	if ep.Controls.MaxInFlight > 0 {
		return ep.Controls.MaxInFlight
	}
	return t.cfg.MaxInFlightPerEndpoint
}

// admitInflight takes one of ep's slots, waiting up to inflightWait. It returns the
// release func (a no-op without a cap), or a deferral delay when the endpoint stayed
// full (the caller snoozes the job).
func (t *Transport) admitInflight(ctx context.Context, ep *Endpoint, metadata []byte) (release func(), deferFor time.Duration) {
	n := t.inflightCap(ep)
	if n <= 0 {
		return func() {}, 0
	}
	sl := t.slots.get(ep.ID, n)
	release = func() { <-sl.ch }
	select {
	case sl.ch <- struct{}{}:
		return release, 0
	default:
	}
	timer := time.NewTimer(inflightWait)
	defer timer.Stop()
	select {
	case sl.ch <- struct{}{}:
		return release, 0
	case <-timer.C:
	case <-ctx.Done():
	}
	k := inflightDeferrals(metadata)
	setMeta(ctx, metaInflightDeferrals, k+1)
	d := inflightDefer << min(k, 6)
	d = min(d, inflightDeferMax)
	return nil, d + rand.N(d/4+1) // jitter: a backlog's deliveries come back apart
}

func inflightDeferrals(metadata []byte) int { return int(metadataInt(metadata, metaInflightDeferrals)) }
