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
	ctx, span := startSend(ctx, destination, ev, attribute.Int("eventhub.attempt", attempt))
	err := send(ctx)
	endSpan(span, err)
	return err
}

// startSend starts the producer span "send <destination>" continuing ev's trace.
func startSend(ctx context.Context, destination string, ev *cloudevent.Event, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return tracerFrom(nil).Start(ExtractTrace(ctx, ev), "send "+destination,
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(eventAttrs(ev)...),
		trace.WithAttributes(attribute.String("messaging.destination.name", destination)),
		trace.WithAttributes(attrs...))
}

// TraceSendInTx starts, for each event of a batch written to destination inside the
// producer's own transaction (an outbox destination whose records live in the ledger's
// database: outbox.TxSender), the producer span "send <destination>" the relay's
// TraceAttempt would have made, each continuing its event's trace; end(err) ends them
// all with the write's outcome. The spans cover the write, not a later delivery (the
// webhook worker's attempts, the stream's consumers have their own).
func TraceSendInTx(ctx context.Context, destination string, evs []*cloudevent.Event) (end func(error)) {
	spans := make([]trace.Span, len(evs))
	for i, ev := range evs {
		_, spans[i] = startSend(ctx, destination, ev,
			attribute.Int("eventhub.attempt", 1), attribute.Bool("eventhub.in_transaction", true))
	}
	return func(err error) {
		for _, sp := range spans {
			endSpan(sp, err)
		}
	}
}
