package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

var errBoom = errors.New("handler fails on purpose")

// TestB1_AckAfterProcessing stops a consumer while its handler still holds an event:
// the event must come back to the queue and reach the next consumer. With a quorum
// queue the redelivery carries the broker's x-delivery-count header, which must not
// disturb decoding.
func TestB1_AckAfterProcessing(t *testing.T) {
	t.Parallel()
	for _, qt := range []string{QueueClassic, QueueQuorum} {
		t.Run(qt, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			cfg := b.config(t)
			cfg.QueueType = qt
			cfg.DrainTimeout = 50 * time.Millisecond // the blocked handler outlives it
			c := newConsumer(t, cfg)
			tr := newTransport(t, cfg)
			ev := testEvent("user.created")
			mustSend(t, tr, ev)

			entered, release := make(chan struct{}), make(chan struct{})
			defer close(release)
			if err := c.Start(context.Background(), func(ctx context.Context, _ *cloudevent.Event) error {
				close(entered)
				select {
				case <-release:
				case <-ctx.Done():
				}
				return errors.New("interrupted")
			}); err != nil {
				t.Fatal(err)
			}
			<-entered
			// The handler has the event but has not returned: closing must leave it unacked.
			if err := c.Close(); err == nil {
				t.Fatal("Close with a handler past the drain timeout returned nil, want DeadlineExceeded")
			}
			waitFor(t, "the unacked event back in the queue", func() bool { return b.queueDepth(t, b.queue) == 1 })
			if n := b.queueDepth(t, b.queue+".retry"); n != 0 {
				t.Fatalf("retry queue holds %d: an interrupted handler was counted as a failure", n)
			}
			if qt == QueueQuorum {
				m, ok, err := b.admin.Get(b.queue, false)
				if err != nil || !ok {
					t.Fatalf("Get: %v %v", ok, err)
				}
				if _, has := m.Headers["x-delivery-count"]; !has {
					t.Errorf("quorum redelivery without x-delivery-count: %v", m.Headers)
				}
				if err := m.Nack(false, true); err != nil {
					t.Fatal(err)
				}
			}
			rec := newRecorder()
			cfg2 := b.config(t)
			cfg2.QueueType = qt
			c2 := newConsumer(t, cfg2)
			if err := c2.Start(context.Background(), rec.handle); err != nil {
				t.Fatal(err)
			}
			got := rec.waitN(t, 1, "redelivery to the next consumer")
			if got[0].ID != ev.ID {
				t.Fatalf("got %s, want %s", got[0].ID, ev.ID)
			}
		})
	}
}

func TestE6_DelayedRetryThenDLQ(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config(t)
	c := newConsumer(t, cfg)
	tr := newTransport(t, cfg)
	failing, fine := testEvent("order.placed"), testEvent("order.placed")
	rec := newRecorder()
	rec.fail = func(ev *cloudevent.Event, n int) error {
		if ev.ID == failing.ID {
			return fmt.Errorf("attempt %d: %w", n, errBoom)
		}
		return nil
	}
	if err := c.Start(context.Background(), rec.handle); err != nil {
		t.Fatal(err)
	}
	mustSend(t, tr, failing, fine)
	rec.waitN(t, 1, "the healthy event, not blocked by the failing one")

	d := openDLQ(t, cfg)
	var dead []DeadLetter
	waitFor(t, "the failing event in the DLQ", func() bool {
		var err error
		dead, err = d.List(context.Background(), 10)
		return err == nil && len(dead) == 1
	})
	if n := rec.count(failing.ID); n != 1+DefaultMaxRetries {
		t.Errorf("failing event handled %d times, want %d (1 + %d retries)", n, 1+DefaultMaxRetries, DefaultMaxRetries)
	}
	dl := dead[0]
	if dl.ID != failing.ID || dl.Reason != reasonMaxDeliveries || dl.Retries != DefaultMaxRetries || dl.Queue != b.queue || dl.RoutingKey != failing.Type {
		t.Errorf("dead letter = id %s reason %q retries %d queue %q key %q; want %s %q %d %q %q",
			dl.ID, dl.Reason, dl.Retries, dl.Queue, dl.RoutingKey, failing.ID, reasonMaxDeliveries, DefaultMaxRetries, b.queue, failing.Type)
	}
	if !containsSecret(errors.New(dl.Error), "attempt 4") {
		t.Errorf("dead letter error %q, want the final error", dl.Error)
	}
	if dl.Event == nil || dl.Event.ID != failing.ID {
		t.Errorf("dead letter event not decoded despite x-death headers: %+v", dl.Event)
	}
	if _, ok := dl.Headers["x-death"]; !ok {
		t.Errorf("dead letter lacks the broker's x-death history")
	}
	if n := b.queueDepth(t, b.queue+".retry"); n != 0 {
		t.Errorf("retry queue holds %d, want 0", n)
	}
}

func TestE7_MalformedAndUnknownVersionToDLQAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config(t)
	cfg.Versions = versionFunc(func(ev *cloudevent.Event) error {
		if ev.DataVersion() == "9.0.0" {
			return errors.New("unknown major 9")
		}
		return nil
	})
	c := newConsumer(t, cfg)
	tr := newTransport(t, cfg)
	rec := newRecorder()
	if err := c.Start(context.Background(), rec.handle); err != nil {
		t.Fatal(err)
	}
	// Not a CloudEvent: plain JSON from some other client.
	if err := b.admin.Publish(b.exchange, "user.created", false, false, amqp.Publishing{
		MessageId: "raw-1", ContentType: "application/json", Body: []byte(`{"hello":1}`),
		Headers: amqp.Table{"cloudEvents:time": int32(5)},
	}); err != nil {
		t.Fatal(err)
	}
	future := testEvent("user.created")
	future.SetDataVersion("9.0.0")
	good := testEvent("user.created")
	mustSend(t, tr, future, good)
	rec.waitN(t, 1, "the good event")

	d := openDLQ(t, cfg)
	var dead []DeadLetter
	waitFor(t, "two dead letters", func() bool {
		var err error
		dead, err = d.List(context.Background(), 10)
		return err == nil && len(dead) == 2
	})
	reasons := map[string]string{}
	for _, dl := range dead {
		reasons[dl.ID] = dl.Reason
		if dl.Retries != 0 {
			t.Errorf("%s: %d retries before the DLQ, want 0", dl.ID, dl.Retries)
		}
	}
	if reasons["raw-1"] != reasonMalformed || reasons[future.ID] != reasonUnknownVersion {
		t.Errorf("reasons = %v, want raw-1 %s and %s %s", reasons, reasonMalformed, future.ID, reasonUnknownVersion)
	}
	if rec.count(future.ID) != 0 {
		t.Errorf("handler saw the unknown-major event")
	}
}

func TestE6_RedeliveryDecodesXDeath(t *testing.T) {
	t.Parallel()
	for _, qt := range []string{QueueClassic, QueueQuorum} {
		t.Run(qt, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			cfg := b.config(t)
			cfg.QueueType = qt
			c := newConsumer(t, cfg)
			tr := newTransport(t, cfg)
			ev := testEvent("user.created")
			ev.SetExtension("flag", true)
			ev.SetExtension("count", int32(-3))
			rec := newRecorder()
			rec.fail = func(_ *cloudevent.Event, n int) error {
				if n <= 2 {
					return errBoom
				}
				return nil
			}
			if err := c.Start(context.Background(), rec.handle); err != nil {
				t.Fatal(err)
			}
			mustSend(t, tr, ev)
			got := rec.waitN(t, 1, "the event after two delayed retries")[0]
			if got.ID != ev.ID || got.Extensions["count"] != int32(-3) || got.Extensions["flag"] != true || string(got.Data) != string(ev.Data) {
				t.Fatalf("after dead-lettering rounds got %+v, want %+v", got, ev)
			}
			if n := rec.count(ev.ID); n != 3 {
				t.Fatalf("handled %d times, want 3", n)
			}
		})
	}
}

func TestE7_CatchAllSkipsHubEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config(t)
	cfg.Patterns = []string{"*"}
	c := newConsumer(t, cfg)
	tr := newTransport(t, cfg)
	rec := newRecorder()
	if err := c.Start(context.Background(), rec.handle); err != nil {
		t.Fatal(err)
	}
	hubEv, appEv := testEvent("hub.transport.failed"), testEvent("identity.user.created")
	mustSend(t, tr, hubEv, appEv)
	got := rec.waitN(t, 1, "the application event")
	if got[0].ID != appEv.ID {
		t.Fatalf("got %s (%s), want the application event", got[0].ID, got[0].Type)
	}
	waitFor(t, "the hub event acked and dropped", func() bool { return b.queueDepth(t, b.queue) == 0 })
	if rec.count(hubEv.ID) != 0 {
		t.Fatal("catch-all * delivered a hub.* event")
	}
}

type versionFunc func(*cloudevent.Event) error

func (f versionFunc) CheckVersion(ev *cloudevent.Event) error { return f(ev) }

func openDLQ(t testing.TB, cfg Config) *DLQ {
	t.Helper()
	d, err := OpenDLQ(context.Background(), cfg)
	if err != nil {
		t.Fatalf("OpenDLQ: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func TestE6_ConsumerRecoversDeletedQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config(t)
	c := newConsumer(t, cfg)
	tr := newTransport(t, cfg)
	rec := newRecorder()
	if err := c.Start(context.Background(), rec.handle); err != nil {
		t.Fatal(err)
	}
	mustSend(t, tr, testEvent("a.b"))
	rec.waitN(t, 1, "the first event")
	if _, err := b.admin.QueueDelete(b.queue, false, false, false); err != nil {
		t.Fatal(err)
	}
	// The broker cancels the consumer; the next session declares queue and bindings again.
	waitFor(t, "the queue declared again", func() bool { return b.queueExists(t, b.queue) })
	ev := testEvent("a.b")
	waitFor(t, "the event routable again", func() bool { return tr.Send(context.Background(), []*cloudevent.Event{ev}) == nil })
	if got := rec.waitN(t, 1, "the event after recovery"); got[0].ID != ev.ID {
		t.Fatalf("got %s, want %s", got[0].ID, ev.ID)
	}
}

func TestE4_HandlerContextCarriesTheEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config(t)
	c := newConsumer(t, cfg)
	tr := newTransport(t, cfg)
	ev := testEvent("user.created")
	ev.SetCorrelationID("corr-42")
	type seen struct{ tenant, corr, id string }
	got := make(chan seen, 1)
	if err := c.Start(context.Background(), func(ctx context.Context, _ *cloudevent.Event) error {
		got <- seen{hub.TenantFrom(ctx), hub.CorrelationIDFrom(ctx), hub.EventFromContext(ctx).ID}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mustSend(t, tr, ev)
	select {
	case s := <-got:
		if s != (seen{"tenant-1", "corr-42", ev.ID}) {
			t.Fatalf("handler context = %+v, want tenant-1, corr-42, %s", s, ev.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("handler never ran")
	}
}
