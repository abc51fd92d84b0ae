package webhook

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the transport's collectors. The breaker gauge is read from the database
// at scrape time (a Collector, not a Gauge this process sets), so every replica
// exports the same, current state rather than what it last happened to observe.
type metrics struct {
	deliveries  *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	transitions *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, name string, b *breakers) *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "webhook_attempts_total",
			Help:        "Webhook delivery attempts and deferrals by outcome: delivered, failed (will retry), dead (last attempt failed), gone (410), blocked (SSRF), invalid, endpoint_deleted, endpoint_disabled, deferred (breaker open, no attempt spent).",
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
	if reg != nil {
		reg.MustRegister(m.deliveries, m.duration, m.transitions, &breakerCollector{b: b, name: name})
	}
	return m
}

var (
	breakerStateDesc = prometheus.NewDesc("webhook_breaker_state",
		"1 for the current state of each endpoint's breaker (closed, open, half_open), read from the ledger database.",
		[]string{"transport", "endpoint", "state"}, nil)
	breakerFailuresDesc = prometheus.NewDesc("webhook_breaker_consecutive_failures",
		"Consecutive failed attempts of each endpoint.", []string{"transport", "endpoint"}, nil)
)

// breakerCollector exports every breaker's state from the table at scrape time.
type breakerCollector struct {
	b    *breakers
	name string
}

func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- breakerStateDesc
	ch <- breakerFailuresDesc
}

func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := c.b.list(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(breakerStateDesc, err)
		return
	}
	for _, s := range list {
		for _, st := range []BreakerState{BreakerClosed, BreakerOpen, BreakerHalfOpen} {
			v := 0.0
			if s.State == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(breakerStateDesc, prometheus.GaugeValue, v, c.name, s.EndpointID, string(st))
		}
		ch <- prometheus.MustNewConstMetric(breakerFailuresDesc, prometheus.GaugeValue, float64(s.Failures), c.name, s.EndpointID)
	}
}
