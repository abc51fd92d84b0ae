package hub

import (
	"context"

	"github.com/koder/eventhub/cloudevent"
)

type ctxKey int

const (
	tenantKey ctxKey = iota
	correlationKey
	eventKey
)

// WithTenant returns a context whose Publish calls stamp tenant id on events that lack a
// tenantid (C1). Middleware that authenticates a request is the natural place to set it.
func WithTenant(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, tenantKey, id)
}

// TenantFrom returns the tenant id set by WithTenant (or ContextWithEvent), or "".
func TenantFrom(ctx context.Context) string {
	s, _ := ctx.Value(tenantKey).(string)
	return s
}

// WithCorrelationID returns a context whose Publish calls stamp id on events that lack a
// correlationid (E4), so every event caused by one request shares it.
func WithCorrelationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, correlationKey, id)
}

// CorrelationIDFrom returns the correlation id set by WithCorrelationID (or
// ContextWithEvent), or "".
func CorrelationIDFrom(ctx context.Context) string {
	s, _ := ctx.Value(correlationKey).(string)
	return s
}

// ContextWithEvent prepares a handler's context for ev: the publisher's span becomes the
// remote parent (ExtractTrace), and the event's tenant and correlation id flow onto any
// event the handler publishes downstream (E4: consumers keep the correlation id). Every
// consumer calls it before running a handler; TracedHandler does so.
func ContextWithEvent(ctx context.Context, ev *cloudevent.Event) context.Context {
	ctx = ExtractTrace(ctx, ev)
	if t := ev.TenantID(); t != "" {
		ctx = WithTenant(ctx, t)
	}
	if c := ev.CorrelationID(); c != "" {
		ctx = WithCorrelationID(ctx, c)
	}
	return context.WithValue(ctx, eventKey, ev)
}

// EventFromContext returns the event ContextWithEvent stored, or nil.
func EventFromContext(ctx context.Context) *cloudevent.Event {
	ev, _ := ctx.Value(eventKey).(*cloudevent.Event)
	return ev
}
