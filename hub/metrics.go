package hub

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Delivery outcomes, the values of hub_delivery_total's outcome label.
const (
	OutcomeOK       = "ok"       // a Send succeeded
	OutcomeRetry    = "retry"    // a Send failed and will be retried
	OutcomeFailed   = "failed"   // the last attempt failed: a hub.transport.failed event was emitted
	OutcomeDropped  = "dropped"  // the route's queue was full: failed without an attempt
	OutcomeEnqueued = "enqueued" // stored in the outbox (outbox mode, PublishTx)
)

// hubMetrics are the hub's own collectors; transports' R8 collectors live in
// StreamMetrics.
type hubMetrics struct {
	published prometheus.Counter
	delivery  *prometheus.CounterVec
	seconds   *prometheus.HistogramVec
	failed    *prometheus.CounterVec
}

func newHubMetrics(reg prometheus.Registerer) (*hubMetrics, error) {
	m := &hubMetrics{
		published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_published_total",
			Help: "Events accepted by Publish and PublishTx (valid, handed to routes).",
		}),
		delivery: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_delivery_total",
			Help: "Delivery events per route, by outcome (ok, retry, failed, dropped, enqueued); counted per event.",
		}, []string{"route", "outcome"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hub_delivery_seconds",
			Help:    "Duration of one Send attempt of a batch to a route's transport.",
			Buckets: []float64{.0005, .001, .005, .01, .05, .1, .5, 1, 5, 30},
		}, []string{"route"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_transport_failed_total",
			Help: "Events whose direct delivery failed for good (one hub.transport.failed event each).",
		}, []string{"route"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.published, m.delivery, m.seconds, m.failed} {
			if err := reg.Register(c); err != nil {
				var are prometheus.AlreadyRegisteredError
				if errors.As(err, &are) {
					return nil, Errorf(AlreadyExists, "hub: metrics already registered on this registerer (one Hub per registerer): %w", err)
				}
				return nil, Wrap(InvalidArgument, err)
			}
		}
	}
	return m, nil
}
