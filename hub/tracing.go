package hub

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/koder/eventhub/cloudevent"
)

// TracerName is the instrumentation scope of the hub's spans.
const TracerName = "github.com/koder/eventhub/hub"

// traceContext is the W3C propagator. The hub uses it directly instead of
// otel.GetTextMapPropagator so that trace context crosses every transport in the
// CloudEvents Distributed Tracing extension even when the application installed no
// global propagator (the otel default is a no-op).
var traceContext = propagation.TraceContext{}

// eventCarrier adapts an event's traceparent/tracestate extensions to the otel carrier.
type eventCarrier struct{ ev *cloudevent.Event }

func (c eventCarrier) Get(key string) string { return c.ev.Extension(key) }

func (c eventCarrier) Set(key, value string) {
	if key == cloudevent.ExtTraceParent || key == cloudevent.ExtTraceState {
		c.ev.SetExtension(key, value)
	}
}

func (c eventCarrier) Keys() []string {
	return []string{cloudevent.ExtTraceParent, cloudevent.ExtTraceState}
}

// InjectTrace writes the span of ctx into ev's traceparent/tracestate extensions. An
// event that already carries a traceparent keeps it: it was published inside another
// trace (for example, re-published by a consumer) and that link is the meaningful one.
func InjectTrace(ctx context.Context, ev *cloudevent.Event) {
	if ev.Extension(cloudevent.ExtTraceParent) != "" {
		return
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	traceContext.Inject(ctx, eventCarrier{ev})
}

// ExtractTrace returns ctx with the publisher's span (from ev's traceparent) as remote
// parent, so a consumer's spans join the publisher's trace. Without a valid traceparent
// ctx is returned unchanged.
func ExtractTrace(ctx context.Context, ev *cloudevent.Event) context.Context {
	if ev.Extension(cloudevent.ExtTraceParent) == "" {
		return ctx
	}
	return traceContext.Extract(ctx, eventCarrier{ev})
}

// tracerFrom returns the hub's tracer from tp, or from the otel global provider (a no-op
// unless the application installed one).
func tracerFrom(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(TracerName)
}

// eventAttrs are the span attributes of one event (OpenTelemetry messaging and
// CloudEvents semantic conventions).
func eventAttrs(ev *cloudevent.Event) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("cloudevents.event_id", ev.ID),
		attribute.String("cloudevents.event_type", ev.Type),
		attribute.String("cloudevents.event_source", ev.Source),
	}
}

// endSpan records err on span and ends it.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.String("eventhub.error_code", Code(err).String()))
	}
	span.End()
}

// TracedHandler wraps h for a consumer: it prepares the context with ContextWithEvent
// (publisher's span as parent, tenant and correlation id) and runs h inside a consumer
// span named "process <name>". tp nil means the otel global provider. Transports' Consumer
// implementations wrap the application's handler with it, so tracing needs no code in
// handlers.
func TracedHandler(name string, h Handler, tp trace.TracerProvider) Handler {
	tracer := tracerFrom(tp)
	spanName := "process " + name
	return func(ctx context.Context, ev *cloudevent.Event) error {
		ctx = ContextWithEvent(ctx, ev)
		ctx, span := tracer.Start(ctx, spanName,
			trace.WithSpanKind(trace.SpanKindConsumer),
			trace.WithAttributes(eventAttrs(ev)...),
			trace.WithAttributes(attribute.String("messaging.destination.name", name)))
		err := h(ctx, ev)
		endSpan(span, err)
		return err
	}
}
