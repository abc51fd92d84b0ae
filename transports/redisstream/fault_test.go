package redisstream

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/internal/testenv/redisproc"
	"github.com/koder/eventhub/streams"
)

// TestFault_RedisRestartWhileFlowing kills (SIGKILL) a Redis the test owns while events
// flow and starts it again: every event whose Send succeeded, before and after, is
// consumed. The publisher retries failed Sends as the hub does.
func TestFault_RedisRestartWhileFlowing(t *testing.T) {
	t.Parallel()
	const total, killAt = 300, 100
	srv := redisproc.Start(t)
	stream := testenv.Name(t)
	tr, err := New(ownClient(t, srv), Config{Stream: stream, Logger: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })

	var mu sync.Mutex
	handled := map[string]bool{}
	c, err := NewConsumer(ownClient(t, srv), streams.ConsumerConfig{
		Stream: stream, Group: "fault-restart", Consumer: "c1", Start: "0", Count: 10,
		Block: 100 * time.Millisecond, ClaimMinIdle: 300 * time.Millisecond, ClaimInterval: 100 * time.Millisecond,
		MaxDeliveries: 100, Logger: testenv.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(testenv.Context(t, 2*time.Minute), func(_ context.Context, ev *cloudevent.Event) error {
		mu.Lock()
		handled[ev.ID] = true
		mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	published := make([]string, 0, total)
	failures := 0
	for i := 0; i < total; i++ {
		if i == killAt {
			srv.Stop()
		}
		ev := streamtest.NewEvent(t, "user.updated", "u")
		for attempt := 0; ; attempt++ {
			err := tr.Send(context.Background(), []*cloudevent.Event{ev})
			if err == nil {
				break
			}
			failures++
			if failures == 3 {
				srv.Restart() // Redis comes back after the publisher saw it down
			}
			if attempt > 200 {
				t.Fatalf("published %d of %d: Send keeps failing: %v", len(published), total, err)
			}
			time.Sleep(20 * time.Millisecond) // the retry backoff of a publisher, not a wait for a condition
		}
		published = append(published, ev.ID)
	}
	if failures == 0 {
		t.Fatal("no Send failed: the server was not down")
	}
	missing := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, id := range published {
			if !handled[id] {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for missing() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := missing(); n > 0 {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("published %d (Send failures retried: %d), handled %d distinct, missing %d", len(published), failures, len(handled), n)
	}
}

// TestFault_DeadConsumerPendingClaimed: consumer A reads a batch and dies mid-handler
// (its connections are cut, it never acks); consumer B of the same group claims A's
// pending entries after ClaimMinIdle and processes every one.
func TestFault_DeadConsumerPendingClaimed(t *testing.T) {
	t.Parallel()
	const total = 50
	srv := redisproc.Start(t)
	stream := testenv.Name(t)
	tr, err := New(ownClient(t, srv), Config{Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if err := tr.Send(context.Background(), newEvents(t, total)); err != nil {
		t.Fatal(err)
	}
	cfg := streams.ConsumerConfig{
		Stream: stream, Group: "fault-claim", Start: "0", Count: total,
		Block: 100 * time.Millisecond, ClaimMinIdle: 300 * time.Millisecond, ClaimInterval: 100 * time.Millisecond,
		DrainTimeout: 200 * time.Millisecond, Logger: testenv.Logger(t),
	}

	// A: takes the whole batch, then hangs in its first handler until the test ends.
	aClient := ownClient(t, srv)
	cfgA := cfg
	cfgA.Consumer = "a"
	a, err := NewConsumer(aClient, cfgA)
	if err != nil {
		t.Fatal(err)
	}
	hang, release := make(chan struct{}), make(chan struct{})
	var hangOnce sync.Once
	if err := a.Start(context.Background(), func(ctx context.Context, ev *cloudevent.Event) error {
		hangOnce.Do(func() { close(hang) })
		<-release
		return ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(release); _ = a.Close() })
	select {
	case <-hang:
	case <-time.After(20 * time.Second):
		t.Fatal("consumer A never started")
	}
	_ = aClient.Close() // A's process is gone: no ack, no read, no claim from it again

	// B: a healthy consumer of the same group.
	var mu sync.Mutex
	handled := map[string]int{}
	done := make(chan struct{})
	cfgB := cfg
	cfgB.Consumer = "b"
	b, err := NewConsumer(ownClient(t, srv), cfgB)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background(), func(_ context.Context, ev *cloudevent.Event) error {
		mu.Lock()
		defer mu.Unlock()
		handled[ev.ID]++
		if len(handled) == total {
			close(done)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("published %d, held by the dead consumer %d, handled by the survivor %d", total, total, len(handled))
	}
}

// TestFault_RedisLosesData restarts a Redis that keeps nothing on disk: the stream and
// the group are gone. The consumer re-creates its group and receives what is published
// after the restart.
func TestFault_RedisLosesData(t *testing.T) {
	t.Parallel()
	srv := redisproc.Start(t, "--appendonly", "no", "--save", "")
	stream := testenv.Name(t)
	tr, err := New(ownClient(t, srv), Config{Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	got := make(chan string, 4)
	c, err := NewConsumer(ownClient(t, srv), streams.ConsumerConfig{
		Stream: stream, Group: "fault-volatile", Consumer: "c1",
		Block: 100 * time.Millisecond, Logger: testenv.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background(), func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	wait := func(want string) {
		t.Helper()
		select {
		case id := <-got:
			if id != want {
				t.Fatalf("got %s, want %s", id, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s not consumed", want)
		}
	}
	before := newEvents(t, 1)
	if err := tr.Send(context.Background(), before); err != nil {
		t.Fatal(err)
	}
	wait(before[0].ID)

	srv.Stop()
	srv.Restart() // empty: no stream, no group
	after := newEvents(t, 1)
	for attempt := 0; ; attempt++ {
		if err := tr.Send(context.Background(), after); err == nil {
			break
		} else if attempt > 100 {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // publisher retry backoff while the pool reconnects
	}
	wait(after[0].ID)
}
