package redisstream

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// TestW3_DLQOperations dead-letters events for real, then lists, inspects, replays
// (the consumer handles the replayed entry) and purges.
func TestW3_DLQOperations(t *testing.T) {
	t.Parallel()
	testDLQOperations(t, newClient(t))
}

// testDLQOperations is TestW3_DLQOperations on client (one server or a cluster).
func testDLQOperations(t *testing.T, c redis.UniversalClient) {
	ctx := testenv.Context(t, time.Minute)
	stream := "koder:events:" + testenv.Name(t)
	stream = stream[:len("koder:events:")] + sanitize(stream[len("koder:events:"):])
	t.Cleanup(func() { c.Del(context.Background(), stream, DLQStreamFor(c, stream)) })
	tr, err := New(c, Config{Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })

	var healed atomic.Bool
	handled := make(chan string, 8)
	cons, err := NewConsumer(c, streams.ConsumerConfig{
		Stream: stream, Group: "ops-test", Consumer: "c1", Start: "0", MaxDeliveries: 1,
		Block: 100 * time.Millisecond, Logger: testenv.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cons.Start(ctx, func(_ context.Context, ev *cloudevent.Event) error {
		if !healed.Load() {
			return errors.New("downstream is broken")
		}
		handled <- ev.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cons.Close() })
	evs := []*cloudevent.Event{
		streamtest.NewEvent(t, "identity.user.erased", "u1"),
		streamtest.NewEvent(t, "identity.user.erased", "u2"),
		streamtest.NewEvent(t, "identity.user.erased", "u3"),
	}
	evs[0].SetExtension("group", "an extension named like a DLQ field")
	if err := tr.Send(ctx, evs); err != nil {
		t.Fatal(err)
	}
	d := NewDLQ(c, DLQStreamFor(c, stream))
	testenv.WaitFor(t, 10*time.Second, "3 dead letters", func() bool { n, _ := d.Len(ctx); return n == 3 })

	list, err := d.List(ctx, "", 2)
	if err != nil || len(list) != 2 {
		t.Fatalf("List page 1: %d, %v", len(list), err)
	}
	rest, err := d.List(ctx, list[1].ID, 10)
	if err != nil || len(rest) != 1 {
		t.Fatalf("List page 2: %d, %v", len(rest), err)
	}
	first, err := d.Get(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if first.Fields["event_id"] != evs[0].ID || first.Error != "downstream is broken" || first.Reason != streams.ReasonMaxDeliveries ||
		first.SourceStream != stream || first.Group != "ops-test" || first.OriginalID == "" || first.Deliveries != 1 ||
		first.Fields["group"] != "an extension named like a DLQ field" || first.Time.IsZero() {
		t.Fatalf("Get = %+v", first)
	}
	if _, err := d.Get(ctx, "1-1"); hub.Code(err) != hub.NotFound {
		t.Fatalf("Get of a missing id: %v", err)
	}

	healed.Store(true)
	newID, err := d.Replay(ctx, first.ID)
	if err != nil || newID == "" {
		t.Fatalf("Replay: %q, %v", newID, err)
	}
	select {
	case id := <-handled:
		if id != evs[0].ID {
			t.Fatalf("replayed %s, handled %s", evs[0].ID, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the replayed entry was not consumed")
	}
	if _, err := d.Replay(ctx, first.ID); hub.Code(err) != hub.NotFound {
		t.Fatalf("second Replay: %v, want NotFound", err)
	}
	if n, err := d.Purge(ctx, rest[0].ID); err != nil || n != 1 {
		t.Fatalf("Purge one: %d, %v", n, err)
	}
	if n, err := d.Purge(ctx); err != nil || n != 1 {
		t.Fatalf("Purge all: %d, %v", n, err)
	}
	if n, _ := d.Len(ctx); n != 0 {
		t.Fatalf("Len after purge = %d", n)
	}
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}
