package streamtest

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// The wire contract: what the entries look like (R2 never empty, seed 001's encoding)
// and what a consumer hands its handler (E4).

// E4PublishFromHandler: the handler's context carries the received event, so an event
// the handler publishes through a hub gets its tenant, correlation id and trace (E4,
// E7, R8), and hub.EventFromContext returns it.
func E4PublishFromHandler(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	downstream, err := hub.New(hub.WithSource("/streamtest/downstream"), hub.WithLogger(testenv.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = downstream.Close() })
	published := make(chan *cloudevent.Event, 1)
	downstream.Subscribe("streamtest.downstream", func(_ context.Context, ev *cloudevent.Event) error {
		select {
		case published <- ev:
		default: // a redelivery
		}
		return nil
	})
	inContext := make(chan *cloudevent.Event, 1)
	StartConsumer(t, h, cfg, func(ctx context.Context, ev *cloudevent.Event) error {
		select {
		case inContext <- hub.EventFromContext(ctx):
		default:
		}
		return downstream.Publish(ctx, &cloudevent.Event{Source: "/streamtest/downstream", Type: "streamtest.downstream"})
	})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	sent := NewEvent(t, "identity.user.erased", "user-u1").SetTenantID("tenant-e4").SetCorrelationID("corr-e4")
	sent.SetExtension(cloudevent.ExtTraceParent, "00-"+traceID+"-00f067aa0ba902b7-01")
	Publish(t, h.Publisher(t, stream), sent)

	got := recv(t, published, "the event published from the handler")
	if got.TenantID() != "tenant-e4" || got.CorrelationID() != "corr-e4" {
		t.Fatalf("downstream event tenant %q correlation %q, want tenant-e4, corr-e4 (E4)", got.TenantID(), got.CorrelationID())
	}
	if tp := got.Extension(cloudevent.ExtTraceParent); !strings.HasPrefix(tp, "00-"+traceID+"-") {
		t.Fatalf("downstream traceparent %q, want trace id %s (R8)", tp, traceID)
	}
	if ev := recv(t, inContext, "the handler"); ev == nil || ev.ID != sent.ID {
		t.Fatalf("hub.EventFromContext = %v, want the received event", ev)
	}
}

// R2NeverEmpty: an event without actor, subject, time or data is written with every R2
// field non-empty (defaults listed in ce_defaulted) and consumed unchanged.
func R2NeverEmpty(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	got := make(chan *cloudevent.Event, 1)
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	sent := &cloudevent.Event{ID: cloudevent.NewID(), Source: "/streamtest", SpecVersion: cloudevent.SpecVersion,
		Type: "streamtest.bare", Extensions: map[string]any{cloudevent.ExtTenantID: "tenant-A"}}
	Publish(t, h.PublisherWire(t, stream, streams.Wire{DefaultSubject: "unspecified"}), sent.Clone())

	ev := recv(t, got, "the handler")
	if !reflect.DeepEqual(ev, sent) {
		t.Fatalf("consumed\n%#v\nwant\n%#v", ev, sent)
	}
	e := WaitLen(t, h, stream, 1)[0]
	for _, f := range []string{"type", "event_id", "occurred_at", "tenant_id", "subject_id", "actor", "data"} {
		if e[f] == "" {
			t.Errorf("R2 field %s is empty or missing in %v", f, e)
		}
	}
	if e["actor"] != "system" || e["subject_id"] != "unspecified" || e["data"] != "{}" {
		t.Errorf("defaults in %v", e)
	}
}

// R2EmptyFieldMalformed: an entry with an empty mandatory field goes to the DLQ at once
// like a missing one (N2); a consumer with AllowEmptyFields reads it as unset.
func R2EmptyFieldMalformed(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	id := cloudevent.NewID()
	if err := h.Append(context.Background(), stream,
		"type", "identity.user.erased", "event_id", id, "occurred_at", "2026-05-14T12:34:56Z",
		"tenant_id", "tenant-A", "subject_id", "", "actor", "", "data", `{"erasure_id":"e1"}`); err != nil {
		t.Fatalf("Append: %v", err)
	}
	strict := FastConfig(t, h, stream)
	StartConsumer(t, h, strict, func(_ context.Context, ev *cloudevent.Event) error {
		t.Errorf("strict consumer handled %s", ev.ID)
		return nil
	})
	d := WaitLen(t, h, strict.DLQStream, 1)[0]
	if d["event_id"] != id || d[streams.FieldReason] != streams.ReasonMalformed ||
		!strings.Contains(d[streams.FieldError], "subject_id") || !strings.Contains(d[streams.FieldError], "actor") {
		t.Fatalf("DLQ entry %v: want %s, reason malformed, an error naming subject_id and actor", d, id)
	}

	legacy := FastConfig(t, h, stream)
	legacy.Group += "-legacy"
	legacy.DLQStream += "-legacy"
	legacy.AllowEmptyFields = true
	got := make(chan *cloudevent.Event, 1)
	StartConsumer(t, h, legacy, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	if ev := recv(t, got, "the legacy consumer"); ev.ID != id || ev.Subject != "" || ev.Actor() != "" {
		t.Fatalf("legacy consumer got %#v", ev)
	}
}

// E1Seed001RoundTrip: a publisher with the seed 001 encoding writes E1's fields, never
// empty, and a consumer with that encoding gets the event back unchanged.
func E1Seed001RoundTrip(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	cfg.Encoding = streams.EncodingSeed001
	got := make(chan *cloudevent.Event, 2)
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	full := NewEvent(t, "user.created", "user-u1").SetCorrelationID("req_abc123").SetDataVersion("1.0.0")
	full.SetExtension("ip", "192.168.1.1")
	full.SetExtension("attempt", int32(2))
	bare := &cloudevent.Event{ID: cloudevent.NewID(), Source: "/streamtest", SpecVersion: cloudevent.SpecVersion,
		Type: "user.deleted", Extensions: map[string]any{cloudevent.ExtTenantID: "tenant-A"}}
	Publish(t, h.PublisherWire(t, stream, streams.Wire{Encoding: streams.EncodingSeed001}), full.Clone(), bare.Clone())
	for _, want := range []*cloudevent.Event{full, bare} {
		if ev := recv(t, got, "the handler"); !reflect.DeepEqual(ev, want) {
			t.Fatalf("consumed\n%#v\nwant\n%#v", ev, want)
		}
	}
	for _, e := range WaitLen(t, h, stream, 2) {
		for _, f := range []string{"event_id", "correlation_id", "event_type", "version", "timestamp", "source", "data", "metadata"} {
			if e[f] == "" {
				t.Errorf("E1 field %s is empty or missing in %v", f, e)
			}
		}
	}
}

// E1HandWrittenEntry: an entry a seed 001 product writes by hand is consumed, its tenant
// from DefaultTenant; the version gate (E5) applies: a 2.x entry goes to the DLQ.
func E1HandWrittenEntry(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	cfg.Encoding = streams.EncodingSeed001
	cfg.DefaultTenant = "tenant-A"
	cfg.Versions = majorOne{}
	got := make(chan *cloudevent.Event, 2)
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	entry := func(id, version string) {
		t.Helper()
		if err := h.Append(context.Background(), stream,
			"event_id", id, "correlation_id", "req_abc123", "event_type", "user.created", "version", version,
			"timestamp", "2024-01-15T10:30:00.000Z", "source", "identity-platform",
			"data", `{"user_id":"uuid","email":"user@acme.com"}`,
			"metadata", `{"ip":"192.168.1.1","user_agent":"Mozilla/5.0...","request_id":"uuid"}`); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	entry("7c9e6679-7425-40de-944b-e07fc1f90ae7", "2.0.0")
	entry("8d0f7780-8536-41ef-a55c-f18fd2a01bf8", "1.0.0")
	ev := recv(t, got, "the 1.x entry")
	if ev.ID != "8d0f7780-8536-41ef-a55c-f18fd2a01bf8" || ev.Type != "user.created" || ev.TenantID() != "tenant-A" ||
		ev.CorrelationID() != "req_abc123" || ev.Extension("useragent") != "Mozilla/5.0..." ||
		string(ev.Data) != `{"user_id":"uuid","email":"user@acme.com"}` {
		t.Fatalf("decoded %#v", ev)
	}
	d := WaitLen(t, h, cfg.DLQStream, 1)[0]
	if d["event_id"] != "7c9e6679-7425-40de-944b-e07fc1f90ae7" || d[streams.FieldReason] != streams.ReasonUnknownVersion {
		t.Fatalf("DLQ entry %v, want the 2.0.0 entry with reason %s", d, streams.ReasonUnknownVersion)
	}
	WaitPending(t, h, stream, cfg.Group, 0)
}
