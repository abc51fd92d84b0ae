package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/kdbstream"
)

// Outcomes of hub_failure_events_total.
const (
	failureRecorded = "recorded" // written to the sink
	failureError    = "error"    // the sink refused it (logged by the hub)
	failureSkipped  = "skipped"  // a failure of a route to the sink itself
)

// failureSinkName labels the default sink's kdbstream transport in metrics and logs.
const failureSinkName = "failures"

// failureSink is the binary's hub.WithFailureSink (F1): every hub.transport.failed event
// goes to the configured transport, or by default to a kdbstream stream on the store,
// and is counted. The hub needs its sink at hub.New, before any transport is open, so
// the target is set once Start opened it; a failure before that (there is none: routes
// forward only after it) would be counted as an error.
//
// Failures of a route whose transport is the sink itself are skipped (lint refuses such
// a config; this is the guard for the library's own invariant that a failing sink is
// never retried): they could only fail again.
type failureSink struct {
	sink   config.FailureSink
	label  string
	target atomic.Pointer[hub.Transport]
	own    hub.Transport // the default sink's transport, which the app closes
	total  *prometheus.CounterVec
	log    *slog.Logger
}

func newFailureSink(s config.FailureSink, reg prometheus.Registerer, log *slog.Logger) (*failureSink, error) {
	label := s.Transport
	if label == "" {
		label = s.Stream
	}
	f := &failureSink{sink: s, label: label, log: log, total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_failure_events_total",
		Help: "hub.transport.failed events (F1) by sink and outcome: recorded, error (the sink refused them), skipped (a failure of the sink's own transport).",
	}, []string{"sink", "outcome"})}
	for _, o := range []string{failureRecorded, failureError, failureSkipped} {
		f.total.WithLabelValues(label, o) // present at 0, so alerts can rate() it
	}
	if err := reg.Register(f.total); err != nil {
		return nil, err
	}
	return f, nil
}

// open sets the target: the named transport, or the store's stream.
func (f *failureSink) open(ctx context.Context, a *App) error {
	var t hub.Transport
	if f.sink.Transport != "" {
		if t = a.transport(f.sink.Transport); t == nil {
			return fmt.Errorf("transport %q is not open", f.sink.Transport)
		}
	} else {
		eng, err := a.rt.KDB(ctx)
		if err != nil {
			return err
		}
		kt, err := kdbstream.New(eng, kdbstream.Config{Stream: f.sink.Stream, Name: failureSinkName,
			Logger: a.log, Metrics: a.rt.StreamMetrics})
		if err != nil {
			return err
		}
		f.own, t = kt, kt
	}
	f.target.Store(&t)
	a.log.Info("failure events recorded", "sink", f.sink.String())
	return nil
}

// Send records batch on the target. Called by the hub once per final failure, with a
// timeout (hub.DefaultFailureSinkTimeout); its error is logged there, never retried.
func (f *failureSink) Send(ctx context.Context, batch []*cloudevent.Event) error {
	keep := batch
	if f.sink.Transport != "" {
		keep = make([]*cloudevent.Event, 0, len(batch))
		for _, ev := range batch {
			if f.ownFailure(ev) {
				f.total.WithLabelValues(f.label, failureSkipped).Inc()
				continue
			}
			keep = append(keep, ev)
		}
		if len(keep) == 0 {
			return nil
		}
	}
	tp := f.target.Load()
	if tp == nil {
		f.total.WithLabelValues(f.label, failureError).Add(float64(len(keep)))
		return hub.Errorf(hub.FailedPrecondition, "failures: sink %s is not open yet", f.sink)
	}
	if err := (*tp).Send(ctx, keep); err != nil {
		f.total.WithLabelValues(f.label, failureError).Add(float64(len(keep)))
		return err
	}
	f.total.WithLabelValues(f.label, failureRecorded).Add(float64(len(keep)))
	return nil
}

// ownFailure reports whether ev records a failure of a route to the sink's transport
// (route names are RouteName(transport, pattern)).
func (f *failureSink) ownFailure(ev *cloudevent.Event) bool {
	var tf hub.TransportFailure
	if json.Unmarshal(ev.Data, &tf) != nil {
		return false
	}
	return strings.HasPrefix(tf.Route, f.sink.Transport+":")
}

// Close closes nothing: the target is a configured transport (closed with the others)
// or the default sink, which the app closes through closeOwn.
func (f *failureSink) Close() error { return nil }

// closeOwn closes the default sink's transport (not its engine: the store's).
func (f *failureSink) closeOwn() error {
	if f.own == nil {
		return nil
	}
	return f.own.Close()
}

var _ hub.Transport = (*failureSink)(nil)
