package transporttest

import (
	"context"
	"testing"

	"github.com/koder/eventhub/cloudevent"
)

// TestRoundTrip sends a full event (every attribute, every extension type, unicode), an
// event with opaque binary data and a minimal one, and checks each arrives unchanged
// (after Features.Normalize) and valid. Every sent event is valid (cloudevent Validate).
func TestRoundTrip(t *testing.T, h Harness, f Features) {
	ctx := context.Background()
	rec := newRecorder(f)
	stop := h.Consume("", rec.handle)
	defer stop()

	sent := []*cloudevent.Event{FullEvent(), BinaryEvent(), MinimalEvent()}
	for _, ev := range sent {
		if err := h.Transport().Send(ctx, []*cloudevent.Event{ev.Clone()}); err != nil {
			t.Fatalf("Send(%s): %v", ev.Type, err)
		}
	}
	got := rec.waitIDs(t, "the round-trip events", sent)
	byID := map[string]*cloudevent.Event{}
	for _, ev := range got {
		byID[ev.ID] = ev
	}
	for _, ev := range sent {
		want := ev.Clone()
		if f.Normalize != nil {
			f.Normalize(want)
		}
		if d := Diff(want, byID[ev.ID]); d != "" {
			t.Errorf("%s changed in transit:\n%s", ev.Type, d)
		}
		if err := byID[ev.ID].Validate(); err != nil {
			t.Errorf("%s arrived invalid: %v", ev.Type, err)
		}
	}
}

// TestEmptyBatch checks that sending nothing succeeds and delivers nothing.
func TestEmptyBatch(t *testing.T, h Harness, _ Features) {
	if err := h.Transport().Send(context.Background(), nil); err != nil {
		t.Fatalf("Send(nil) = %v, want nil", err)
	}
	if err := h.Transport().Send(context.Background(), []*cloudevent.Event{}); err != nil {
		t.Fatalf("Send(empty) = %v, want nil", err)
	}
}

// TestSendDoesNotRetainBatch checks that the transport neither modifies the caller's
// events nor reads them after Send returns (the Transport contract).
func TestSendDoesNotRetainBatch(t *testing.T, h Harness, f Features) {
	rec := newRecorder(f)
	stop := h.Consume("", rec.handle)
	defer stop()

	ev := NewEvent(1)
	orig := ev.Clone()
	if err := h.Transport().Send(context.Background(), []*cloudevent.Event{ev}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if d := Diff(orig, ev); d != "" {
		t.Fatalf("Send modified the caller's event:\n%s", d)
	}
	ev.Subject = "changed after send"
	ev.Data[0] = 'X'
	got := rec.waitIDs(t, "the event", []*cloudevent.Event{orig})
	want := orig.Clone()
	if f.Normalize != nil {
		f.Normalize(want)
	}
	if d := Diff(want, got[0]); d != "" {
		t.Fatalf("a change after Send reached the consumer:\n%s", d)
	}
}
