package hub

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/koder/eventhub/cloudevent"
)

// TraceAttempt runs send, one delivery attempt of ev to destination made outside a
// route (the outbox relay, a River job possibly on another replica than the publisher),
// inside a producer span "send <destination>" that continues ev's trace (its
// traceparent), like the route's own attempts. attempt is the attempt number (1 for the
// first). The span goes to the otel global tracer provider.
func TraceAttempt(ctx context.Context, destination string, ev *cloudevent.Event, attempt int, send func(context.Context) error) error {
	ctx, span := tracerFrom(nil).Start(ExtractTrace(ctx, ev), "send "+destination,
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(eventAttrs(ev)...),
		trace.WithAttributes(
			attribute.String("messaging.destination.name", destination),
			attribute.Int("eventhub.attempt", attempt),
		))
	err := send(ctx)
	endSpan(span, err)
	return err
}
