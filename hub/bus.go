package hub

import (
	"context"
	"log/slog"
	"slices"

	"github.com/koder/eventhub/cloudevent"
)

// inprocessRoute is the route label of in-process handler failures in hub_delivery_total.
const inprocessRoute = "inprocess"

// subscription is one in-process subscriber.
type subscription struct {
	id      uint64
	pattern Pattern
	handler Handler // wrapped by TracedHandler
}

// Subscribe runs h, in this process, for every event whose type matches pattern:
// published events (before any transport is tried, so a transport that is down does not
// keep them from local subscribers, N1) and the hub's own events such as
// hub.transport.failed (select them with `hub.#`; the catch-all `*` excludes them).
//
// Handlers run synchronously in the publishing goroutine, in subscription order, with
// the publisher's context prepared by ContextWithEvent and a span per handler. That
// keeps the in-process bus free of queues and goroutines, at the price that a slow
// handler slows its publisher: hand long work to a goroutine or a transport. A handler
// error or panic is logged (event_failed) and counted, never returned to the publisher;
// the event is shared and must not be modified.
//
// An invalid pattern panics, as regexp.MustCompile does: patterns are program text.
// SubscribePattern takes a compiled pattern for patterns that come from input. cancel
// removes the subscription; it is idempotent.
func (h *Hub) Subscribe(pattern string, handler Handler) (cancel func()) {
	return h.SubscribePattern(MustCompilePattern(pattern), handler)
}

// SubscribePattern is Subscribe with a compiled pattern.
func (h *Hub) SubscribePattern(p Pattern, handler Handler) (cancel func()) {
	s := &subscription{
		id:      h.subSeq.Add(1),
		pattern: p,
		handler: TracedHandler("inprocess "+p.String(), handler, h.opts.tracerProvider),
	}
	h.updateSubs(func(subs []*subscription) []*subscription { return append(subs, s) })
	return func() {
		h.updateSubs(func(subs []*subscription) []*subscription {
			return slices.DeleteFunc(subs, func(x *subscription) bool { return x.id == s.id })
		})
	}
}

func (h *Hub) updateSubs(f func([]*subscription) []*subscription) {
	h.routeMu.Lock()
	defer h.routeMu.Unlock()
	subs := f(slices.Clone(*h.subs.Load()))
	h.subs.Store(&subs)
}

// dispatch runs the matching in-process handlers for ev.
func (h *Hub) dispatch(ctx context.Context, ev *cloudevent.Event) {
	for _, s := range *h.subs.Load() {
		if !s.pattern.Match(ev.Type) {
			continue
		}
		if err := safeCall(ctx, s.handler, ev); err != nil {
			h.metrics.delivery.WithLabelValues(inprocessRoute, OutcomeFailed).Inc()
			h.log.LogAttrs(ctx, slog.LevelWarn, "event_failed",
				slog.String("type", ev.Type), slog.String("event_id", ev.ID),
				slog.String("error", err.Error()), slog.Int("retry_count", 0),
				slog.String("subscriber", s.pattern.String()))
		}
	}
}

// safeCall runs h, turning a panic into an Internal error: a broken subscriber must not
// take down its publisher, or the delivery goroutine that reports a failure event.
func safeCall(ctx context.Context, h Handler, ev *cloudevent.Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Errorf(Internal, "hub: subscriber panicked: %v", p)
		}
	}()
	return h(ctx, ev)
}
