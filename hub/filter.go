package hub

import (
	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/filter"
)

// WithFilter narrows the route to the events whose CloudEvents SQL (CESQL) expression
// is true, on top of its pattern: `tenantid = 'acme' AND data.plan = 'pro'`. It is
// compiled once, by Forward, which fails with InvalidArgument (and the line:col of the
// problem) for a bad expression; "" is no filter.
//
// The filter runs in Publish and PublishTx before the event is queued or stored for the
// route, so an event it rejects costs the route nothing: no queue slot, no outbox row,
// no delivery. It sees the event as published (before WithDefaultSubject). `data.a.b`
// reads the JSON payload (see package filter); an event the expression raises an error
// on (a missing attribute, a failed cast) or gives a non-Boolean value does not pass.
func WithFilter(expr string) RouteOption { return func(c *routeConfig) { c.filterExpr = expr } }

// compileFilter is Forward's step for WithFilter.
func (c *routeConfig) compileFilter() error {
	f, err := filter.Compile(c.filterExpr)
	if err != nil {
		return Errorf(InvalidArgument, "hub: route %q: WithFilter: %w", c.name, err)
	}
	c.filter = f
	return nil
}

// accepts reports whether ev goes to the route: its pattern matches the type, then its
// filter (if any) passes. The pattern is checked first: it is a few string compares,
// the filter a CESQL evaluation.
func (r *route) accepts(ev *cloudevent.Event) bool {
	return r.pattern.Match(ev.Type) && r.cfg.filter.Match(ev)
}
