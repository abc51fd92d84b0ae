package hub

import "github.com/prometheus/client_golang/prometheus"

// StreamMetrics are the R8 collectors shared by every stream transport. They are built
// once on the caller's registerer and handed to each transport's Config, so two
// transports in one process never register the same name twice.
type StreamMetrics struct {
	// EventCount counts events by transport, stream and outcome
	// (emitted, received, acked, failed, publish_error).
	EventCount *prometheus.CounterVec
	// DLQ counts events moved to a dead-letter, by transport, stream and reason
	// (max_deliveries, malformed, unknown_version).
	DLQ *prometheus.CounterVec
	// Lag observes, per transport, stream and group, the age of each entry when its
	// handler starts: the time from append (the entry id's milliseconds) to processing.
	Lag *prometheus.HistogramVec
}

// NewStreamMetrics registers the R8 collectors on reg; a nil reg leaves them unregistered
// (usable, never exported), which is what tests and benchmarks want.
func NewStreamMetrics(reg prometheus.Registerer) *StreamMetrics {
	m := &StreamMetrics{
		EventCount: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "event_count_total",
			Help: "Events seen by stream transports, by outcome (R8).",
		}, []string{"transport", "stream", "outcome"}),
		DLQ: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "event_dlq_total",
			Help: "Events moved to a dead-letter stream or queue (R8).",
		}, []string{"transport", "stream", "reason"}),
		Lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "event_lag_seconds",
			Help:    "Age of an entry when its handler starts, from its append time (R8).",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 60, 300, 3600},
		}, []string{"transport", "stream", "group"}),
	}
	if reg != nil {
		reg.MustRegister(m.EventCount, m.DLQ, m.Lag)
	}
	return m
}
