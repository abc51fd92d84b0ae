package hub_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
)

// TestTracing proves the W3C trace context crosses a transport: the consumer's handler
// span is in the publisher's trace, child of the publish span carried in traceparent.
func TestTracing(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	b := setup(t, hub.WithTracerProvider(tp))
	if err := b.hub.Forward("user.*", b.mem); err != nil {
		t.Fatal(err)
	}
	consumer, err := memtransport.NewConsumer(b.broker, memtransport.ConsumerConfig{Stream: b.stream, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		span trace.SpanContext
		ev   *cloudevent.Event
		ctx  context.Context
	}
	handled := make(chan seen, 1)
	if err := consumer.Start(context.Background(), func(ctx context.Context, ev *cloudevent.Event) error {
		handled <- seen{trace.SpanContextFromContext(ctx), ev, ctx}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { consumer.Close() })

	ctx, parent := tp.Tracer("app").Start(context.Background(), "http request")
	ctx = hub.WithCorrelationID(ctx, "corr-trace")
	if err := b.hub.Publish(ctx, event("user.created")); err != nil {
		t.Fatal(err)
	}
	parent.End()
	var got seen
	select {
	case got = <-handled:
	case <-time.After(10 * time.Second):
		t.Fatal("consumer got nothing")
	}
	if err := b.hub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := consumer.Close(); err != nil {
		t.Fatal(err)
	}

	traceID := parent.SpanContext().TraceID()
	if got.span.TraceID() != traceID {
		t.Fatalf("handler runs in trace %s, want the publisher's %s", got.span.TraceID(), traceID)
	}
	if hub.CorrelationIDFrom(got.ctx) != "corr-trace" || hub.EventFromContext(got.ctx) == nil {
		t.Fatal("handler context lacks the event's correlation id or the event")
	}
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		spans[s.Name()] = s
	}
	publish, send, process := spans["publish"], spans["send mem"], spans["process "+b.stream]
	if publish == nil || send == nil || process == nil {
		names := []string{}
		for n := range spans {
			names = append(names, n)
		}
		t.Fatalf("spans %v, want publish, send mem and process %s", names, b.stream)
	}
	for _, s := range []sdktrace.ReadOnlySpan{publish, send, process} {
		if s.SpanContext().TraceID() != traceID {
			t.Errorf("span %q in trace %s, want %s", s.Name(), s.SpanContext().TraceID(), traceID)
		}
	}
	if publish.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Error("publish span is not a child of the caller's span")
	}
	if send.Parent().SpanID() != publish.SpanContext().SpanID() {
		t.Error("delivery attempt span is not a child of the publish span")
	}
	if process.Parent().SpanID() != publish.SpanContext().SpanID() || !process.Parent().IsRemote() {
		t.Error("handler span's remote parent is not the publish span from traceparent")
	}
	if got.ev.Extension(cloudevent.ExtTraceParent) == "" {
		t.Error("delivered event has no traceparent")
	}
}

func TestTraceHelpers(t *testing.T) {
	t.Parallel()
	ev := event("a.b")
	if ctx := hub.ExtractTrace(context.Background(), ev); trace.SpanContextFromContext(ctx).IsValid() {
		t.Fatal("ExtractTrace invented a span for an event without traceparent")
	}
	// Without a span in the context nothing is injected.
	hub.InjectTrace(context.Background(), ev)
	if ev.Extension(cloudevent.ExtTraceParent) != "" {
		t.Fatal("InjectTrace wrote a traceparent without a span")
	}
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("t").Start(context.Background(), "s")
	defer span.End()
	hub.InjectTrace(ctx, ev)
	first := ev.Extension(cloudevent.ExtTraceParent)
	if first == "" {
		t.Fatal("no traceparent injected")
	}
	ctx2, span2 := tp.Tracer("t").Start(context.Background(), "other")
	defer span2.End()
	hub.InjectTrace(ctx2, ev)
	if ev.Extension(cloudevent.ExtTraceParent) != first {
		t.Fatal("InjectTrace overwrote an existing traceparent")
	}
	got := trace.SpanContextFromContext(hub.ExtractTrace(context.Background(), ev))
	if got.SpanID() != span.SpanContext().SpanID() || !got.IsRemote() {
		t.Fatal("ExtractTrace did not return the injected span as remote parent")
	}
}
