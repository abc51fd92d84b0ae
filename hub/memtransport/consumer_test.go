package memtransport_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
)

type testBundle struct {
	broker *memtransport.Broker
	stream string
	tr     *memtransport.Transport
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	h := newHarness(t)
	return &testBundle{broker: h.broker, stream: h.stream, tr: h.tr}
}

func TestConsumer(t *testing.T) {
	t.Parallel()

	t.Run("DeadLettersAfterMaxDeliveries", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c, err := memtransport.NewConsumer(b.broker, memtransport.ConsumerConfig{
			Stream: b.stream, MaxDeliveries: 3, RedeliveryDelay: time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		attempts := make(chan int, 10)
		n := 0
		if err := c.Start(context.Background(), func(context.Context, *cloudevent.Event) error {
			n++
			attempts <- n
			return errors.New("boom")
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ev := transporttest.NewEvent(1)
		if err := b.tr.Send(context.Background(), []*cloudevent.Event{ev}); err != nil {
			t.Fatal(err)
		}
		for want := 1; want <= 3; want++ {
			if got := <-attempts; got != want {
				t.Fatalf("attempt %d, want %d", got, want)
			}
		}
		testenv.WaitFor(t, 5*time.Second, "the dead-letter entry", func() bool {
			return b.broker.Len(b.stream+memtransport.DLQSuffix) == 1
		})
		dead := b.broker.Events(b.stream + memtransport.DLQSuffix)[0]
		if dead.ID != ev.ID || dead.Extension(memtransport.ExtDeadLetterReason) != "boom" {
			t.Fatalf("dead letter = %s reason %q", dead.ID, dead.Extension(memtransport.ExtDeadLetterReason))
		}
		if p := b.broker.Pending(b.stream, b.stream); p != 0 {
			t.Fatalf("pending after dead-letter = %d, want 0", p)
		}
	})

	t.Run("CloseTimesOutAndKeepsEventPending", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c, err := memtransport.NewConsumer(b.broker, memtransport.ConsumerConfig{
			Stream: b.stream, DrainTimeout: 10 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		started := make(chan struct{})
		if err := c.Start(context.Background(), func(ctx context.Context, _ *cloudevent.Event) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}); err != nil {
			t.Fatal(err)
		}
		if err := b.tr.Send(context.Background(), transporttest.NewEvents(1)); err != nil {
			t.Fatal(err)
		}
		<-started
		if err := c.Close(); hub.Code(err) != hub.DeadlineExceeded {
			t.Fatalf("Close = %v, want DeadlineExceeded", err)
		}
		testenv.WaitFor(t, 5*time.Second, "the aborted event to be released", func() bool {
			return b.broker.Pending(b.stream, b.stream) == 1
		})
		if err := c.Close(); err != nil {
			t.Fatalf("second Close = %v", err)
		}
	})

	t.Run("LifecycleErrors", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c, err := memtransport.NewConsumer(b.broker, memtransport.ConsumerConfig{Stream: b.stream})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close before Start = %v", err)
		}
		err = c.Start(context.Background(), func(context.Context, *cloudevent.Event) error { return nil })
		if hub.Code(err) != hub.FailedPrecondition {
			t.Fatalf("Start after Close = %v, want FailedPrecondition", err)
		}
		if _, err := memtransport.NewConsumer(b.broker, memtransport.ConsumerConfig{}); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("NewConsumer without Stream = %v, want InvalidArgument", err)
		}
		if _, err := memtransport.New(b.broker, memtransport.Config{}); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("New without Stream = %v, want InvalidArgument", err)
		}
	})
}

func TestMaxLen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tr, err := memtransport.New(b.broker, memtransport.Config{Stream: b.stream, MaxLen: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Send(context.Background(), transporttest.NewEvents(20)); err != nil {
		t.Fatal(err)
	}
	evs := b.broker.Events(b.stream)
	if b.broker.Len(b.stream) != 20 || len(evs) > 10 || len(evs) < 8 || evs[len(evs)-1].Subject != "subject-19" {
		t.Fatalf("Len %d, retained %d (last %s); want 20 appended, about 8 newest kept", b.broker.Len(b.stream), len(evs), evs[len(evs)-1].Subject)
	}
	got := make(chan string, 20)
	c, err := memtransport.NewConsumer(b.broker, memtransport.ConsumerConfig{Stream: b.stream})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background(), func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev.Subject
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if first := <-got; first != evs[0].Subject {
		t.Fatalf("a new group starts at %s, want the oldest retained %s", first, evs[0].Subject)
	}
}
