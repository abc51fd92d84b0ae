package rabbitmq

import (
	"context"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

func TestE6_DLQAdmin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config(t)
	cfg.MaxRetries = -1 // straight to the DLQ
	c := newConsumer(t, cfg)
	tr := newTransport(t, cfg)
	healed := make(chan struct{})
	rec := newRecorder()
	rec.fail = func(ev *cloudevent.Event, _ int) error {
		select {
		case <-healed:
			return nil
		default:
			return errBoom
		}
	}
	if err := c.Start(context.Background(), rec.handle); err != nil {
		t.Fatal(err)
	}
	evs := []*cloudevent.Event{testEvent("a.one"), testEvent("a.two"), testEvent("a.three")}
	mustSend(t, tr, evs...)
	d := openDLQ(t, cfg)
	ctx := context.Background()
	var list []DeadLetter
	waitFor(t, "three dead letters", func() bool {
		var err error
		list, err = d.List(ctx, 0)
		return err == nil && len(list) == 3
	})
	for i, dl := range list {
		if dl.ID != evs[i].ID || dl.Reason != reasonMaxDeliveries || dl.Event == nil || dl.At.IsZero() {
			t.Errorf("List[%d] = %+v, want %s in order with reason and event", i, dl, evs[i].ID)
		}
	}
	// A quorum queue (the default) puts returned messages back asynchronously; List
	// returns once they are back, so the next operation finds them all.
	if n := b.queueDepth(t, DLQName(b.queue)); n != 3 {
		t.Fatalf("after List the DLQ holds %d ready messages, want 3", n)
	}

	t.Run("Inspect", func(t *testing.T) {
		dl, err := d.Inspect(ctx, evs[1].ID)
		if err != nil || dl.Type != "a.two" {
			t.Fatalf("Inspect = %+v, %v", dl, err)
		}
		if _, err := d.Inspect(ctx, "evt_missing"); hub.Code(err) != hub.NotFound {
			t.Fatalf("Inspect(missing) = %v, want NotFound", err)
		}
	})

	t.Run("ReplayOne", func(t *testing.T) {
		close(healed)
		n, err := d.Replay(ctx, evs[0].ID)
		if err != nil || n != 1 {
			t.Fatalf("Replay = %d, %v", n, err)
		}
		got := rec.waitN(t, 1, "the replayed event")
		if got[0].ID != evs[0].ID {
			t.Fatalf("replayed %s, want %s", got[0].ID, evs[0].ID)
		}
		if left, _ := d.List(ctx, 0); len(left) != 2 {
			t.Fatalf("DLQ holds %d after replaying one, want 2", len(left))
		}
	})

	t.Run("Purge", func(t *testing.T) {
		n, err := d.Purge(ctx)
		if err != nil || n != 2 {
			t.Fatalf("Purge = %d, %v; want 2", n, err)
		}
		if left, _ := d.List(ctx, 0); len(left) != 0 {
			t.Fatalf("DLQ holds %d after purge", len(left))
		}
	})
}
