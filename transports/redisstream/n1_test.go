package redisstream

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/internal/testenv/redisproc"
	"github.com/koder/eventhub/streams"
)

// failSignal wraps a transport and signals each failed Send.
type failSignal struct {
	hub.Transport
	failed chan error
}

func (f *failSignal) Send(ctx context.Context, batch []*cloudevent.Event) error {
	err := f.Transport.Send(ctx, batch)
	if err != nil {
		select {
		case f.failed <- err:
		default:
		}
	}
	return err
}

// ownClient connects to a server the test owns, with short timeouts so an outage shows
// quickly.
func ownClient(t *testing.T, srv *redisproc.Server) *redis.Client {
	opts, err := redis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 300*time.Millisecond, time.Second, time.Second
	opts.MaxRetries = 1
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestN1_RedisDownOnPublish: with Redis down, a hub's in-process subscriber still gets
// the event at once; the hub's direct delivery retries, and once Redis is back the
// cross-service consumer catches up.
func TestN1_RedisDownOnPublish(t *testing.T) {
	t.Parallel()
	srv := redisproc.Start(t)
	stream := testenv.Name(t)
	tr, err := New(ownClient(t, srv), Config{Stream: stream, Logger: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	observed := &failSignal{Transport: tr, failed: make(chan error, 1)}

	cross := make(chan string, 8)
	c, err := NewConsumer(ownClient(t, srv), streams.ConsumerConfig{
		Stream: stream, Group: "auth-erasure-cascade", Consumer: "auth-1", Start: "0",
		Block: 100 * time.Millisecond, ClaimMinIdle: 200 * time.Millisecond, ClaimInterval: 100 * time.Millisecond,
		Logger: testenv.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(testenv.Context(t, time.Minute), func(_ context.Context, ev *cloudevent.Event) error {
		cross <- ev.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	h, err := hub.New(hub.WithLogger(testenv.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if err := h.Forward("identity.#", observed, hub.WithName("redis"), hub.WithRetry(200, 50*time.Millisecond, 200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	local := make(chan string, 8)
	h.Subscribe("identity.#", func(_ context.Context, ev *cloudevent.Event) error {
		local <- ev.ID
		return nil
	})
	// wait receives until want arrives; earlier events may come again (at-least-once:
	// an ack in flight when Redis died is lost), anything else is a failure.
	var seen []string
	wait := func(ch chan string, want, what string) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case got := <-ch:
				if got == want {
					seen = append(seen, got)
					return
				}
				if !slices.Contains(seen, got) {
					t.Fatalf("%s: got unexpected %s, want %s", what, got, want)
				}
			case <-timeout:
				t.Fatalf("%s: %s not received", what, want)
			}
		}
	}

	before := streamtest.NewEvent(t, "identity.user.erased", "user-1")
	if err := h.Publish(context.Background(), before); err != nil {
		t.Fatal(err)
	}
	wait(local, before.ID, "same-process subscriber, Redis up")
	wait(cross, before.ID, "cross-service consumer, Redis up")

	srv.Stop()
	during := streamtest.NewEvent(t, "identity.user.erased", "user-2")
	if err := h.Publish(context.Background(), during); err != nil {
		t.Fatalf("Publish with Redis down: %v (direct delivery must not fail the caller)", err)
	}
	wait(local, during.ID, "same-process subscriber, Redis down")
	select {
	case err := <-observed.failed:
		if hub.Code(err) != hub.Unavailable {
			t.Fatalf("Send with Redis down: %v (code %v), want Unavailable", err, hub.Code(err))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the hub never tried the transport while Redis was down")
	}

	srv.Restart()
	wait(cross, during.ID, "cross-service consumer after Redis came back")
}
