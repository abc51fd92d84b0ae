package hub

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/koder/eventhub/cloudevent"
)

// Publish validates events and hands them to every matching route and subscriber.
//
// Each event is completed in place first, so the caller can log what was sent: a
// missing id, time (UTC) or specversion is filled; tenantid and correlationid come from
// the context (WithTenant, WithCorrelationID) when the event lacks them; dataversion is
// stamped from the validator's latest version of the type (VersionSource) when absent;
// the caller's span is injected as traceparent. Then every event is checked
// (cloudevent Validate, then the Validator): one invalid event fails the whole call with
// its validation error (InvalidArgument), and nothing is sent anywhere.
//
// An event without a subject is refused the same way (one ValidationError on
// "subject" naming the route) when a route it matches cannot carry it: its transport
// is a SubjectRequirer (R2 streams, whose subject_id is mandatory) and the route has no
// WithDefaultSubject. A route with a default subject delivers its own copy with it.
//
// Valid events go, in this order, to
//  1. the outbox, for routes in OutboxMode, in one Enqueue before Publish returns; its
//     failure is Publish's failure and nothing else happens (O1);
//  2. in-process subscribers (Subscribe), synchronously (N1: a transport being down does
//     not keep them from local subscribers);
//  3. the queues of Direct routes, delivered off the caller's path (F1).
//
// A Direct route whose queue is full makes Publish wait for room (WithQueueSize), until
// ctx ends (its error is returned; routes already reached keep the event, so a retry
// may duplicate it there: at-least-once) or the hub closes (FailedPrecondition).
//
// Transports, the outbox and subscribers receive a copy: changing an event after
// Publish returns does not affect its delivery. After Close, Publish fails with
// FailedPrecondition.
func (h *Hub) Publish(ctx context.Context, events ...*cloudevent.Event) (err error) {
	if len(events) == 0 {
		return nil
	}
	ctx, span := h.tracer.Start(ctx, "publish",
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.Int("messaging.batch.message_count", len(events))))
	defer func() { endSpan(span, err) }()
	if h.isClosed() {
		return Errorf(FailedPrecondition, "hub: Publish after Close")
	}
	evs, err := h.prepare(ctx, events)
	if err != nil {
		return err
	}
	routes := *h.routes.Load()
	if err := checkSubjects(routes, evs); err != nil {
		return err
	}

	var items []OutboxItem
	for _, ev := range evs {
		for _, r := range routes {
			if r.cfg.mode == OutboxMode && r.accepts(ev) {
				items = append(items, OutboxItem{Destination: r.cfg.name, Event: r.eventFor(ev)})
			}
		}
	}
	if len(items) > 0 {
		if err := h.opts.outbox.Enqueue(ctx, items); err != nil {
			return err
		}
		h.enqueued(ctx, items)
	}

	for _, ev := range evs {
		h.dispatch(ctx, ev)
	}

	at := time.Now()
	for _, ev := range evs {
		for _, r := range routes {
			if r.cfg.mode != Direct || !r.accepts(ev) {
				continue
			}
			err := h.enqueue(ctx, r, queued{ev: r.eventFor(ev), at: at})
			switch {
			case err == nil:
				h.emitted(ctx, r, ev)
			case errors.Is(err, errQueueFull):
				h.transportFailed(r, []*cloudevent.Event{ev},
					Errorf(ResourceExhausted, "hub: route %q queue full (%d events)", r.cfg.name, r.cfg.queueSize), 0, OutcomeDropped)
			default:
				return err
			}
		}
	}
	h.metrics.published.Add(float64(len(evs)))
	return nil
}

// PublishTx stores events for every matching route, whatever its mode, in the outbox
// inside the caller's transaction tx (a pgx.Tx or *sql.Tx, see Outbox.EnqueueTx): they
// are delivered if and only if the transaction commits (O4). Events are completed and
// validated as in Publish. In-process subscribers are not called: the transaction may
// still roll back. Without WithOutbox it fails with FailedPrecondition.
func (h *Hub) PublishTx(ctx context.Context, tx any, events ...*cloudevent.Event) (err error) {
	ctx, span := h.tracer.Start(ctx, "publish_tx",
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.Int("messaging.batch.message_count", len(events))))
	defer func() { endSpan(span, err) }()
	if h.opts.outbox == nil {
		return Errorf(FailedPrecondition, "hub: PublishTx needs an outbox (WithOutbox)")
	}
	if h.isClosed() {
		return Errorf(FailedPrecondition, "hub: PublishTx after Close")
	}
	if len(events) == 0 {
		return nil
	}
	evs, err := h.prepare(ctx, events)
	if err != nil {
		return err
	}
	routes := *h.routes.Load()
	if err := checkSubjects(routes, evs); err != nil {
		return err
	}
	var items []OutboxItem
	for _, ev := range evs {
		for _, r := range routes {
			if r.accepts(ev) {
				items = append(items, OutboxItem{Destination: r.cfg.name, Event: r.eventFor(ev)})
			}
		}
	}
	if len(items) > 0 {
		if err := h.opts.outbox.EnqueueTx(ctx, tx, items); err != nil {
			return err
		}
		h.enqueued(ctx, items)
	}
	h.metrics.published.Add(float64(len(evs)))
	return nil
}

// errQueueFull reports a full queue on a WithDropWhenFull route.
var errQueueFull = errors.New("hub: queue full")

// enqueue hands q to the route's queue, waiting for room unless the route drops when
// full. The shared lock is held only while trying, never while waiting, so Close (which
// closes the queues under the exclusive lock) is never held up by a waiting publisher;
// it wakes them through h.closing instead.
func (h *Hub) enqueue(ctx context.Context, r *route, q queued) error {
	var retry *time.Timer
	for {
		h.mu.RLock()
		if h.closed {
			h.mu.RUnlock()
			return Errorf(FailedPrecondition, "hub: closed during Publish; direct route %q not reached", r.cfg.name)
		}
		select {
		case r.queue <- q:
			h.mu.RUnlock()
			return nil
		default:
		}
		h.mu.RUnlock()
		if r.cfg.dropWhenFull {
			return errQueueFull
		}
		// A sender's token usually wakes us; the timer covers several publishers
		// waiting on one token.
		if retry == nil {
			retry = time.NewTimer(5 * time.Millisecond)
			defer retry.Stop()
		} else {
			retry.Reset(5 * time.Millisecond)
		}
		select {
		case <-r.space:
		case <-retry.C:
		case <-h.closing:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (h *Hub) isClosed() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.closed
}

// prepare completes the caller's events in place, validates all of them, and returns
// copies for delivery.
func (h *Hub) prepare(ctx context.Context, events []*cloudevent.Event) ([]*cloudevent.Event, error) {
	tenant, corr := TenantFrom(ctx), CorrelationIDFrom(ctx)
	versions, _ := h.opts.validator.(VersionSource)
	out := make([]*cloudevent.Event, len(events))
	for i, ev := range events {
		if ev == nil {
			return nil, Errorf(InvalidArgument, "hub: Publish: event %d is nil", i)
		}
		if ev.Time.IsZero() {
			ev.Time = time.Now().UTC().Truncate(cloudevent.TimePrecision)
		}
		if ev.ID == "" {
			ev.ID = cloudevent.NewIDAt(ev.Time)
		}
		if ev.SpecVersion == "" {
			ev.SpecVersion = cloudevent.SpecVersion
		}
		if tenant != "" && ev.TenantID() == "" {
			ev.SetExtension(cloudevent.ExtTenantID, tenant)
		}
		if corr != "" && ev.CorrelationID() == "" {
			ev.SetExtension(cloudevent.ExtCorrelationID, corr)
		}
		if versions != nil && ev.DataVersion() == "" {
			if v, ok := versions.Latest(ev.Type); ok {
				ev.SetExtension(cloudevent.ExtDataVersion, v)
			}
		}
		InjectTrace(ctx, ev)
		if err := ev.Validate(); err != nil {
			return nil, err
		}
		if h.opts.validator != nil {
			if err := h.opts.validator.Validate(ev); err != nil {
				return nil, err
			}
		}
		out[i] = ev.Clone()
	}
	return out, nil
}

// emitted logs R8's event_emitted for an event handed to a route (stream = route name).
// At debug: it is one record per event and route, the volume of the traffic itself.
func (h *Hub) emitted(ctx context.Context, r *route, ev *cloudevent.Event) {
	if !h.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	h.log.LogAttrs(ctx, slog.LevelDebug, "event_emitted",
		slog.String("type", ev.Type), slog.String("event_id", ev.ID),
		slog.String("subject_id", ev.Subject), slog.String("stream", r.cfg.name),
		slog.String("mode", r.cfg.mode.String()))
}

func (h *Hub) enqueued(ctx context.Context, items []OutboxItem) {
	routes := *h.routes.Load()
	for _, it := range items {
		h.metrics.delivery.WithLabelValues(it.Destination, OutcomeEnqueued).Inc()
		for _, r := range routes {
			if r.cfg.name == it.Destination {
				h.emitted(ctx, r, it.Event)
			}
		}
	}
}
