package transporttest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// DownstreamType is the type of the event TestE4_PublishFromHandler's handler publishes.
const DownstreamType = "transporttest.downstream"

// TraceParent is the W3C trace context the suite's correlated event carries; its trace
// id is TraceID.
const (
	TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	TraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
)

// CorrelatedEvent returns an event with a tenant, a correlation id and a traceparent:
// what a request chain hands from one service to the next (E4, R8).
func CorrelatedEvent() *cloudevent.Event {
	ev := NewEvent(0)
	ev.SetExtension(cloudevent.ExtTenantID, "tenant-e4")
	ev.SetExtension(cloudevent.ExtCorrelationID, "corr-"+ev.ID)
	ev.SetExtension(cloudevent.ExtTraceParent, TraceParent)
	return ev
}

// TestE4_PublishFromHandler checks that a consumer hands its handler a context carrying
// the received event (hub.ContextWithEvent): an event the handler publishes through a
// hub, with no tenant, correlation id or trace of its own, comes out with the received
// event's tenant, correlation id and trace id (E4: consumers keep the correlation id;
// E7; R8: one trace across services), and hub.EventFromContext returns the received
// event. Every consumer must do it, or a service reacting to an event breaks the chain.
func TestE4_PublishFromHandler(t *testing.T, h Harness, f Features) {
	downstream, err := hub.New(hub.WithSource("/eventhub/transporttest/downstream"))
	if err != nil {
		t.Fatalf("hub.New: %v", err)
	}
	defer func() { _ = downstream.Close() }()
	published := make(chan *cloudevent.Event, 1)
	cancel := downstream.Subscribe(DownstreamType, func(_ context.Context, ev *cloudevent.Event) error {
		select {
		case published <- ev:
		default:
		}
		return nil
	})
	defer cancel()

	sent := CorrelatedEvent()
	inContext := make(chan *cloudevent.Event, 1)
	stop := h.Consume("", func(ctx context.Context, ev *cloudevent.Event) error {
		if ev.ID != sent.ID {
			return nil
		}
		select {
		case inContext <- hub.EventFromContext(ctx):
		default:
		}
		// A plain new event: tenant, correlation id and trace must come from ctx.
		out := &cloudevent.Event{Source: "/eventhub/transporttest/downstream", Type: DownstreamType}
		return downstream.Publish(ctx, out)
	})
	defer stop()
	if err := h.Transport().Send(context.Background(), []*cloudevent.Event{sent.Clone()}); err != nil {
		t.Fatalf("Send: %v", err)
	}

	got := wait(t, f, published, "the event published from the handler")
	if got.TenantID() != sent.TenantID() {
		t.Errorf("tenant of the downstream event = %q, want %q (from the handler's context)", got.TenantID(), sent.TenantID())
	}
	if got.CorrelationID() != sent.CorrelationID() {
		t.Errorf("correlation id of the downstream event = %q, want %q (E4)", got.CorrelationID(), sent.CorrelationID())
	}
	tp := got.Extension(cloudevent.ExtTraceParent)
	if parts := strings.Split(tp, "-"); len(parts) != 4 || parts[1] != TraceID {
		t.Errorf("traceparent of the downstream event = %q, want trace id %s (R8)", tp, TraceID)
	}
	if ev := wait(t, f, inContext, "the handler"); ev == nil || ev.ID != sent.ID {
		t.Errorf("hub.EventFromContext in the handler = %v, want the received event %s", ev, sent.ID)
	}
}

// wait receives one value from ch within the suite's timeout.
func wait[T any](t *testing.T, f Features, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(f.timeout()):
		t.Fatalf("timed out after %s waiting for %s", f.timeout(), what)
	}
	var zero T
	return zero
}
