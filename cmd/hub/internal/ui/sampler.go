package ui

import (
	"context"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/koder/eventhub/transports/webhook"
)

// The overview's last hour: a ring of samples taken every SampleEvery. Rates come from
// this process's own Prometheus counters (so they are per replica: each replica's
// console shows the traffic it handled), levels from the shared stores (delivery
// states, breakers, DLQ depths, the outbox backlog: the same on every replica). A
// restart starts an empty hour; Prometheus is the place for longer history.

// DefaultSampleEvery is the sampling interval: 360 samples an hour.
const DefaultSampleEvery = 10 * time.Second

// sampleWindow is how far back the charts go.
const sampleWindow = time.Hour

// sampleTimeout bounds one sample's store reads.
const sampleTimeout = 5 * time.Second

// sample is one point of the overview's charts.
type sample struct {
	At time.Time
	// Rates are per second since the previous sample: in (events published), out
	// (events handed to transports), delivered (webhook 2xx), failed (failed attempts
	// and sends), dlq (entries dead-lettered).
	Rates map[string]float64
	// Levels are counts at the sample's time: deliveries by state (d_pending...),
	// breakers by state (b_open...), outbox (o_backlog, o_dead), each DLQ (dlq:<name>).
	Levels map[string]float64
}

type sampler struct {
	c     *Console
	every time.Duration
	size  int

	mu      sync.Mutex
	ring    []sample
	last    map[string]float64 // the counters at the previous sample
	lastAt  time.Time
	started bool
	wg      sync.WaitGroup
}

func newSampler(c *Console, every time.Duration) *sampler {
	return &sampler{c: c, every: every, size: int(sampleWindow/every) + 1}
}

func (s *sampler) start(ctx context.Context) {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return
	}
	s.started = true
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(s.every)
		defer tick.Stop()
		for {
			s.take(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

func (s *sampler) wait() { s.wg.Wait() }

// samples returns the ring, oldest first.
func (s *sampler) samples() []sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sample(nil), s.ring...)
}

// take reads the counters and levels and appends one sample.
func (s *sampler) take(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	now := time.Now()
	counters := s.counters()
	levels := s.levels(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	sm := sample{At: now, Rates: map[string]float64{}, Levels: levels}
	if s.last != nil {
		dt := now.Sub(s.lastAt).Seconds()
		for k, v := range counters {
			if d := v - s.last[k]; d > 0 && dt > 0 { // a reset (restart of a counter) counts as 0
				sm.Rates[k] = d / dt
			} else {
				sm.Rates[k] = 0
			}
		}
	}
	s.last, s.lastAt = counters, now
	s.ring = append(s.ring, sm)
	if len(s.ring) > s.size {
		s.ring = s.ring[len(s.ring)-s.size:]
	}
}

// counters sums this process's counters into the overview's series.
func (s *sampler) counters() map[string]float64 {
	out := map[string]float64{"in": 0, "out": 0, "delivered": 0, "failed": 0, "dlq": 0}
	if s.c.cfg.Gatherer == nil {
		return out
	}
	mfs, err := s.c.cfg.Gatherer.Gather()
	if err != nil && len(mfs) == 0 {
		return out
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			v := m.GetCounter().GetValue()
			switch mf.GetName() {
			case "hub_published_total":
				out["in"] += v
			case "hub_delivery_total":
				switch label(m, "outcome") {
				case "ok", "enqueued": // sent directly, or stored for the outbox relay
					out["out"] += v
				case "retry", "failed", "dropped":
					out["failed"] += v
				}
			case "webhook_attempts_total":
				switch label(m, "outcome") {
				case "delivered":
					out["delivered"] += v
				case "deferred":
				default:
					out["failed"] += v
				}
			case "event_dlq_total":
				out["dlq"] += v
			}
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// levels reads the shared stores. A store that does not answer leaves its levels out
// of the sample (a gap in the chart), never the whole sample.
func (s *sampler) levels(ctx context.Context) map[string]float64 {
	out := map[string]float64{}
	a := s.c.cfg.Admin
	if t := a.Webhook(); t != nil {
		if n, err := t.DeliveryCounts(ctx); err == nil {
			for _, st := range []webhook.DeliveryState{webhook.DeliveryPending, webhook.DeliveryRunning, webhook.DeliveryRetrying, webhook.DeliveryDelivered, webhook.DeliveryDead} {
				out["d_"+string(st)] = float64(n[st])
			}
		}
		if bs, err := t.Breakers(ctx); err == nil {
			for _, st := range []webhook.BreakerState{webhook.BreakerClosed, webhook.BreakerOpen, webhook.BreakerHalfOpen} {
				out["b_"+string(st)] = 0
			}
			for _, b := range bs {
				out["b_"+string(b.State)]++
			}
		}
	}
	if o := a.Outbox; o != nil {
		if st, err := o.Stats(ctx); err == nil {
			out["o_backlog"], out["o_dead"] = 0, 0
			for _, d := range st {
				out["o_backlog"] += float64(d.Pending + d.Running)
				out["o_dead"] += float64(d.Dead)
			}
		}
	}
	for _, t := range a.DLQNames() {
		if strings.HasSuffix(t.Type, "rabbitmq") {
			continue // a RabbitMQ DLQ is read by taking its messages: not sampled
		}
		d, err := a.DLQ(ctx, t.Name)
		if err != nil {
			continue
		}
		if p, err := d.List(ctx, "", 1); err == nil {
			out["dlq:"+t.Name] = float64(p.Total)
		}
	}
	return out
}
