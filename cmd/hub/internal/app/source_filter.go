package app

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/filter"
)

// filteredPublisher is a source's view of the hub when its section has a filter: the
// events the expression rejects are not published (counted in
// hub_source_filtered_total), the others are, in one Publish as before. The filter
// sees each event as the source produced it, before the hub completes it (a tenantid
// the hub would take from an API key is not there yet).
type filteredPublisher struct {
	next     registry.Publisher
	f        *filter.Filter
	filtered prometheus.Counter
}

func (p *filteredPublisher) Publish(ctx context.Context, evs ...*cloudevent.Event) error {
	keep := evs[:0:0]
	for _, ev := range evs {
		if ev != nil && !p.f.Match(ev) {
			p.filtered.Inc()
			continue
		}
		keep = append(keep, ev)
	}
	if len(keep) == 0 {
		return nil
	}
	return p.next.Publish(ctx, keep...)
}

// sourceRuntime is the runtime a source starts with: a's own, or a copy whose
// Publisher applies the section's filter (checked by config validation already).
func (a *App) sourceRuntime(name, expr string, filtered *prometheus.CounterVec) (*registry.Runtime, error) {
	if expr == "" {
		return a.rt, nil
	}
	f, err := filter.Compile(expr)
	if err != nil {
		return nil, err
	}
	rt := *a.rt
	rt.Publisher = &filteredPublisher{next: a.rt.Publisher, f: f, filtered: filtered.WithLabelValues(name)}
	return &rt, nil
}

// newSourceFilteredCounter is hub_source_filtered_total{source}.
func newSourceFilteredCounter(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_source_filtered_total",
		Help: "Events a source's filter kept from being published.",
	}, []string{"source"})
	if reg != nil {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}
