package eventbus_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/eventbus"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// app is application code written once: it opens the bus from the environment,
// publishes an event and consumes it. TestR9_SwitchByEnvironment runs it unchanged on
// both buses.
func app(ctx context.Context, t *testing.T, stream string) *cloudevent.Event {
	t.Helper()
	bus, err := eventbus.Open(ctx, eventbus.Options{Stream: stream})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer bus.Close()

	got := make(chan *cloudevent.Event, 1)
	c, err := bus.NewConsumer(streams.ConsumerConfig{
		Stream: stream, Group: "auth-erasure-cascade", Consumer: "c1", Start: "0",
		Block: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("NewConsumer: %v", err)
	}
	if err := c.Start(ctx, func(_ context.Context, ev *cloudevent.Event) error {
		select {
		case got <- ev:
		default:
		}
		return nil
	}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer c.Close()

	ev := cloudevent.New("identity", "identity.user.erased")
	ev.SetExtension(cloudevent.ExtTenantID, "tenant-a")
	ev.SetExtension(cloudevent.ExtActor, "system")
	ev.Subject = "user-u123"
	if err := ev.SetData("application/json", map[string]string{"erasure_id": "ERS-1"}); err != nil {
		t.Fatal(err)
	}
	if err := bus.Transport().Send(ctx, []*cloudevent.Event{ev}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	select {
	case rcv := <-got:
		if rcv.ID != ev.ID {
			t.Fatalf("received %s, published %s", rcv.ID, ev.ID)
		}
		return rcv
	case <-ctx.Done():
		t.Fatalf("event not consumed on %s", bus.Kind())
	}
	return nil
}

// TestR9_SwitchByEnvironment proves the cutover is a flag flip: the same code runs on
// Redis and on kdbstream, chosen only by KODER_EVENT_BUS.
func TestR9_SwitchByEnvironment(t *testing.T) { // not parallel: it sets environment variables
	redisURL := testenv.RedisURL(t)
	stream := "events." + testenv.Name(t)

	t.Run("RedisStream", func(t *testing.T) {
		t.Setenv(eventbus.EnvBus, "redis-stream")
		t.Setenv("KODER_REDIS_URL", redisURL)
		app(testenv.Context(t, 30*time.Second), t, stream)
	})
	t.Run("KDBStream", func(t *testing.T) {
		t.Setenv(eventbus.EnvBus, "kdb-stream")
		t.Setenv(eventbus.EnvKDBURL, "kdbstream://"+filepath.Join(t.TempDir(), "events.db"))
		app(testenv.Context(t, 30*time.Second), t, stream)
	})
	t.Run("Unknown", func(t *testing.T) {
		t.Setenv(eventbus.EnvBus, "kafka")
		if _, err := eventbus.Open(context.Background(), eventbus.Options{Stream: stream}); err == nil {
			t.Fatal("an unknown bus kind was accepted")
		}
	})
}
