package hub

import (
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// attemptMiddleware instruments one Send: a producer span (child of the first event's
// publisher span, linked to every other event's), the attempt's duration, its outcome
// per event, and an R8 event_failed record per event when it fails.
func (r *route) attemptMiddleware(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		orig := msg.Context()
		d := deliveryFrom(orig)
		links := make([]trace.Link, 0, len(d.batch)-1)
		for _, ev := range d.batch[1:] {
			if sc := trace.SpanContextFromContext(ExtractTrace(orig, ev)); sc.IsValid() {
				links = append(links, trace.Link{SpanContext: sc})
			}
		}
		ctx, span := r.hub.tracer.Start(ExtractTrace(orig, d.batch[0]), "send "+r.cfg.name,
			trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithLinks(links...),
			trace.WithAttributes(
				attribute.String("messaging.destination.name", r.cfg.name),
				attribute.String("eventhub.transport", r.transportName),
				attribute.Int("messaging.batch.message_count", len(d.batch)),
				attribute.Int("eventhub.attempt", d.attempts),
			))
		msg.SetContext(ctx)
		start := time.Now()
		out, err := h(msg)
		msg.SetContext(orig)
		r.hub.metrics.seconds.WithLabelValues(r.cfg.name).Observe(time.Since(start).Seconds())
		endSpan(span, err)

		m := r.hub.metrics.delivery
		if err == nil {
			m.WithLabelValues(r.cfg.name, OutcomeOK).Add(float64(len(d.batch)))
			return out, nil
		}
		if d.attempts < r.cfg.attempts && IsRetryable(err) {
			m.WithLabelValues(r.cfg.name, OutcomeRetry).Add(float64(len(d.batch)))
		}
		if r.hub.log.Enabled(orig, slog.LevelWarn) {
			for _, ev := range d.batch {
				r.hub.log.LogAttrs(orig, slog.LevelWarn, "event_failed",
					slog.String("type", ev.Type), slog.String("event_id", ev.ID),
					slog.String("error", err.Error()), slog.Int("retry_count", d.attempts-1),
					slog.String("route", r.cfg.name), slog.String("code", Code(err).String()))
			}
		}
		return out, err
	}
}
