package webhook

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/hub"
)

// metrics are the transport's collectors. The breaker gauge is read from the database
// at scrape time (a Collector, not a Gauge this process sets), so it is the current,
// shared state rather than what this process last happened to observe; and only the
// ledger's leader (ledger.Ledger.Leader) exports it, so a sum over replicas counts
// each endpoint once.
type metrics struct {
	deliveries  *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	transitions *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, name string, b *breakers, leader func() bool, backlog *atomic.Int64) (*metrics, error) {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "webhook_attempts_total",
			Help:        "Webhook delivery attempts and deferrals by outcome: delivered, failed (will retry), dead (last attempt failed), gone (410), blocked (SSRF), invalid, endpoint_deleted, endpoint_disabled, deferred (breaker open), rate_limited, ordered_wait and inflight_deferred (the endpoint's in-flight cap reached); the deferrals spend no attempt.",
			ConstLabels: prometheus.Labels{"transport": name},
		}, []string{"outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "webhook_attempt_duration_seconds",
			Help:        "Duration of one webhook request, connect to response, by status class (2xx, 4xx, 5xx, error).",
			ConstLabels: prometheus.Labels{"transport": name},
			Buckets:     []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"class"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "webhook_breaker_transitions_total",
			Help:        "Breaker transitions made by this process, by target state.",
			ConstLabels: prometheus.Labels{"transport": name},
		}, []string{"to"}),
	}
	if reg == nil {
		return m, nil
	}
	labels := prometheus.Labels{"transport": name}
	bc := &breakerCollector{
		b: b, leader: leader,
		state: prometheus.NewDesc("webhook_breaker_state",
			"1 for the current state of each endpoint's breaker (closed, open, half_open), read from the ledger database at scrape time.",
			[]string{"endpoint", "state"}, labels),
		failures: prometheus.NewDesc("webhook_breaker_consecutive_failures",
			"Consecutive failed attempts of each endpoint.", []string{"endpoint"}, labels),
	}
	bl := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "webhook_first_attempt_backlog_bytes",
		Help:        "Encoded size of the deliveries this process holds in memory waiting for a first-attempt slot; at first_attempt_backlog_bytes new deliveries go through the ledger's queue instead.",
		ConstLabels: labels,
	}, func() float64 { return float64(backlog.Load()) })
	for _, c := range []prometheus.Collector{m.deliveries, m.duration, m.transitions, bc, bl} {
		if err := reg.Register(c); err != nil {
			return nil, hub.Errorf(hub.AlreadyExists, "webhook: metrics of transport %q: %w (give each transport its own Name)", name, err)
		}
	}
	return m, nil
}

// breakerCollector exports every breaker's state from the table at scrape time.
type breakerCollector struct {
	b               *breakers
	leader          func() bool // exports only while true
	state, failures *prometheus.Desc
}

func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.state
	ch <- c.failures
}

func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	if c.leader != nil && !c.leader() {
		return // another replica exports the shared state
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := c.b.list(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.state, err)
		return
	}
	for _, s := range list {
		for _, st := range []BreakerState{BreakerClosed, BreakerOpen, BreakerHalfOpen} {
			v := 0.0
			if s.State == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, v, s.EndpointID, string(st))
		}
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, float64(s.Failures), s.EndpointID)
	}
}
