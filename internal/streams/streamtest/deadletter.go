package streamtest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// N2Malformed: an entry missing a mandatory field goes to the DLQ at once, with the
// reason; the handler never sees it and the consumer carries on.
func N2Malformed(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	got := make(chan *cloudevent.Event, 2)
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	bad := cloudevent.NewID()
	if err := h.Append(context.Background(), stream,
		"type", "identity.user.erased", "event_id", bad, "occurred_at", "2026-05-14T12:34:56Z",
		"subject_id", "user-u123", "actor", "system", "data", `{}`); err != nil { // no tenant_id
		t.Fatalf("Append: %v", err)
	}
	good := NewEvent(t, "identity.user.erased", "user-ok")
	Publish(t, h.Publisher(t, stream), good)

	if ev := recv(t, got, "the valid event after the malformed one"); ev.ID != good.ID {
		t.Fatalf("handler got %s, want %s", ev.ID, good.ID)
	}
	dlq := WaitLen(t, h, cfg.DLQStream, 1)
	d := dlq[0]
	if d["event_id"] != bad || d[streams.FieldReason] != streams.ReasonMalformed ||
		!strings.Contains(d[streams.FieldError], "tenant") || d[streams.FieldDeliveryCount] != "1" {
		t.Fatalf("DLQ entry %v: want event %s, reason %s, an error naming tenant_id, 1 delivery", d, bad, streams.ReasonMalformed)
	}
	WaitPending(t, h, stream, cfg.Group, 0)
	select {
	case ev := <-got:
		t.Fatalf("handler got an unexpected event %s", ev.ID)
	default:
	}
}

type majorOne struct{}

func (majorOne) CheckVersion(ev *cloudevent.Event) error {
	if v := ev.DataVersion(); v != "" && !strings.HasPrefix(v, "1.") {
		return fmt.Errorf("unknown MAJOR version %q of %s", v, ev.Type)
	}
	return nil
}

// E5UnknownMajor: an event of an unknown MAJOR payload version goes to the DLQ at once.
func E5UnknownMajor(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	cfg.Versions = majorOne{}
	got := make(chan *cloudevent.Event, 2)
	StartConsumer(t, h, cfg, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	v2 := NewEvent(t, "user.created", "u1").SetDataVersion("2.0.0")
	v1 := NewEvent(t, "user.created", "u2").SetDataVersion("1.4.0")
	Publish(t, h.Publisher(t, stream), v2, v1)
	if ev := recv(t, got, "the 1.x event"); ev.ID != v1.ID {
		t.Fatalf("handler got %s, want %s", ev.ID, v1.ID)
	}
	d := WaitLen(t, h, cfg.DLQStream, 1)[0]
	if d["event_id"] != v2.ID || d[streams.FieldReason] != streams.ReasonUnknownVersion {
		t.Fatalf("DLQ entry %v, want %s with reason %s", d, v2.ID, streams.ReasonUnknownVersion)
	}
	WaitPending(t, h, stream, cfg.Group, 0)
}

// DeadLetterAfterCrashes: an entry whose consumers kept dying while holding it (its
// delivery count passed MaxDeliveries without any handler failing) is dead-lettered when
// claimed, without running the handler again.
func DeadLetterAfterCrashes(t *testing.T, h Harness) {
	stream := testenv.Name(t)
	cfg := FastConfig(t, h, stream)
	ctx := testenv.Context(t, time.Minute)
	if err := h.Backend.CreateGroup(ctx, stream, cfg.Group, "0"); err != nil {
		t.Fatalf("CreateGroup: %v", err)
	}
	ev := NewEvent(t, "user.deleted", "u1")
	Publish(t, h.Publisher(t, stream), ev)
	if es, err := h.Backend.ReadGroup(ctx, stream, cfg.Group, "crashed-0", ">", 1, 0); err != nil || len(es) != 1 {
		t.Fatalf("first crashed consumer's read: %d entries, %v", len(es), err)
	}
	for i := 1; i <= streams.DefaultMaxDeliveries; i++ {
		_, es, err := h.Backend.AutoClaim(ctx, stream, cfg.Group, fmt.Sprintf("crashed-%d", i), 0, "0-0", 10)
		if err != nil || len(es) != 1 || es[0].Deliveries != int64(i+1) {
			t.Fatalf("claim %d by a crashing consumer: %+v, %v (want delivery count %d)", i, es, err, i+1)
		}
	}
	var calls atomic.Int32
	StartConsumer(t, h, cfg, func(context.Context, *cloudevent.Event) error {
		calls.Add(1)
		return nil
	})
	d := WaitLen(t, h, cfg.DLQStream, 1)[0]
	WaitPending(t, h, stream, cfg.Group, 0)
	if d["event_id"] != ev.ID || d[streams.FieldReason] != streams.ReasonMaxDeliveries || d[streams.FieldDeliveryCount] != "5" {
		t.Fatalf("DLQ entry %v: want %s, reason %s, delivery_count 5", d, ev.ID, streams.ReasonMaxDeliveries)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("handler ran %d times for an entry past its delivery limit", n)
	}
}
