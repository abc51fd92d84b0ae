package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/koder/eventhub/cloudevent"
)

// TypeTransportFailed is the type of the event the hub emits when direct delivery of an
// event failed for good (F1; `events.transport` in seed 002). The catch-all pattern `*`
// excludes it, `hub.#` or `#` select it.
const TypeTransportFailed = "hub.transport.failed"

// TransportFailure is the data of a hub.transport.failed event.
type TransportFailure struct {
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	Route     string `json:"route"`
	Transport string `json:"transport"`
	Error     string `json:"error"`
	Code      string `json:"code"`
	Attempts  int    `json:"attempts"`
}

// failureMiddleware is outermost: whatever error survives retry is the final one.
func (r *route) failureMiddleware(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		out, err := h(msg)
		if err == nil {
			return out, nil
		}
		d := deliveryFrom(msg.Context())
		r.hub.transportFailed(r, d.batch, err, d.attempts, OutcomeFailed)
		return nil, nil
	}
}

// transportFailed records the final failure of each event in batch: one
// hub.transport.failed event (same tenant and correlation id as the original) to the
// in-process bus and the failure sink, the metrics, and an R8 event_dlq record at warn.
// It never routes the failure event through Forward routes: a failing route matching
// `#` would otherwise feed on its own failures.
func (h *Hub) transportFailed(r *route, batch []*cloudevent.Event, cause error, attempts int, outcome string) {
	ctx := context.Background()
	h.metrics.delivery.WithLabelValues(r.cfg.name, outcome).Add(float64(len(batch)))
	h.metrics.failed.WithLabelValues(r.cfg.name).Add(float64(len(batch)))
	failures := make([]*cloudevent.Event, 0, len(batch))
	for _, ev := range batch {
		h.log.LogAttrs(ctx, slog.LevelWarn, "event_dlq",
			slog.String("type", ev.Type), slog.String("event_id", ev.ID),
			slog.String("final_error", cause.Error()), slog.String("route", r.cfg.name),
			slog.Int("attempts", attempts))
		failures = append(failures, h.failureEvent(r, ev, cause, attempts))
	}
	for _, fe := range failures {
		h.dispatch(ExtractTrace(ctx, fe), fe)
	}
	if sink := h.opts.failureSink; sink != nil {
		sctx, cancel := context.WithTimeout(ctx, DefaultFailureSinkTimeout)
		defer cancel()
		if err := sink.Send(sctx, failures); err != nil {
			h.log.LogAttrs(ctx, slog.LevelError, "hub: failure sink rejected hub.transport.failed events",
				slog.String("error", err.Error()), slog.Int("count", len(failures)), slog.String("route", r.cfg.name))
		}
	}
}

// failureEvent builds the hub.transport.failed event for ev.
func (h *Hub) failureEvent(r *route, ev *cloudevent.Event, cause error, attempts int) *cloudevent.Event {
	data, _ := json.Marshal(TransportFailure{
		EventID: ev.ID, EventType: ev.Type, Route: r.cfg.name, Transport: r.transportName,
		Error: cause.Error(), Code: Code(cause).String(), Attempts: attempts,
	})
	now := time.Now().UTC().Truncate(cloudevent.TimePrecision)
	fe := &cloudevent.Event{
		ID:              cloudevent.NewIDAt(now),
		Source:          h.opts.source,
		SpecVersion:     cloudevent.SpecVersion,
		Type:            TypeTransportFailed,
		DataContentType: cloudevent.ContentTypeJSON,
		Subject:         ev.ID,
		Time:            now,
		Data:            data,
	}
	fe.SetExtension(cloudevent.ExtActor, "system")
	for _, ext := range []string{cloudevent.ExtTenantID, cloudevent.ExtCorrelationID, cloudevent.ExtTraceParent, cloudevent.ExtTraceState} {
		if v := ev.Extension(ext); v != "" {
			fe.SetExtension(ext, v)
		}
	}
	return fe
}
