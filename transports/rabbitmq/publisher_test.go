package rabbitmq

import (
	"context"
	"strings"
	"sync"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

func TestB1_Publisher(t *testing.T) {
	t.Parallel()

	t.Run("DurableExchangeAndQueuePersistentMessages", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		cfg := b.config(t)
		newConsumer(t, cfg)
		tr := newTransport(t, cfg)
		ev := testEvent("user.created")
		mustSend(t, tr, ev)

		m, ok, err := b.admin.Get(b.queue, true)
		if err != nil || !ok {
			t.Fatalf("Get: ok=%v err=%v", ok, err)
		}
		if m.DeliveryMode != amqp.Persistent {
			t.Errorf("delivery mode = %d, want %d (persistent)", m.DeliveryMode, amqp.Persistent)
		}
		if m.RoutingKey != ev.Type || m.Exchange != b.exchange {
			t.Errorf("routed %q via %q, want %q via %q", m.RoutingKey, m.Exchange, ev.Type, b.exchange)
		}
		// Redeclaring with durable=false must fail with 406 when the broker has them durable.
		for _, redeclare := range []func(*amqp.Channel) error{
			func(ch *amqp.Channel) error {
				return ch.ExchangeDeclare(b.exchange, amqp.ExchangeTopic, false, false, false, false, nil)
			},
			func(ch *amqp.Channel) error {
				_, err := ch.QueueDeclare(b.queue, false, false, false, false, queueArgs(&cfg, b.queue+".retry", 0))
				return err
			},
		} {
			conn, err := amqp.Dial(b.url)
			if err != nil {
				t.Fatal(err)
			}
			ch, _ := conn.Channel()
			err = redeclare(ch)
			conn.Close()
			if hub.Code(wrap(err)) != hub.FailedPrecondition {
				t.Errorf("non-durable redeclare: err = %v, want 406 PRECONDITION_FAILED (the entity is durable)", err)
			}
		}
	})

	t.Run("ManyConfirmsInFlight", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		cfg := b.config(t)
		cfg.Channels, cfg.MaxInFlight = 2, 64
		newConsumer(t, cfg)
		tr := newTransport(t, cfg)
		const senders, perSender, batch = 8, 10, 25
		var wg sync.WaitGroup
		errs := make(chan error, senders)
		for range senders {
			wg.Go(func() {
				for range perSender {
					evs := make([]*cloudevent.Event, batch)
					for i := range evs {
						evs[i] = testEvent("order.placed")
					}
					if err := tr.Send(context.Background(), evs); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("Send: %v", err)
		}
		if got, want := b.queueDepth(t, b.queue), senders*perSender*batch; got != want {
			t.Fatalf("queue holds %d messages after %d confirmed sends, want %d", got, want, want)
		}
	})

	t.Run("UnroutableIsNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		cfg := b.config(t)
		cfg.Patterns = []string{"user.*"}
		newConsumer(t, cfg)
		tr := newTransport(t, cfg)
		routed, lost := testEvent("user.created"), testEvent("billing.invoice.paid")
		err := tr.Send(context.Background(), []*cloudevent.Event{routed, lost, testEvent("user.deleted")})
		if hub.Code(err) != hub.NotFound {
			t.Fatalf("Send with an unroutable event: %v (code %v), want NotFound", err, hub.Code(err))
		}
		if n := b.queueDepth(t, b.queue); n != 2 {
			t.Fatalf("queue holds %d, want the 2 routable events", n)
		}
		mustSend(t, tr, testEvent("user.updated")) // the channel stays usable
	})

	t.Run("MandatoryOffAcceptsUnroutable", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		cfg := b.config(t)
		off := false
		cfg.Mandatory = &off
		tr := newTransport(t, cfg)
		mustSend(t, tr, testEvent("nobody.listens"))
	})

	t.Run("DeletedExchangeIsNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		cfg := b.config(t)
		cfg.Channels = 1
		off := false
		cfg.Mandatory = &off
		tr := newTransport(t, cfg)
		mustSend(t, tr, testEvent("a.b"))
		if err := b.admin.ExchangeDelete(b.exchange, false, false); err != nil {
			t.Fatal(err)
		}
		err := tr.Send(context.Background(), []*cloudevent.Event{testEvent("a.b")})
		if hub.Code(err) != hub.NotFound {
			t.Fatalf("Send to a deleted exchange: %v (code %v), want NotFound", err, hub.Code(err))
		}
	})

	t.Run("InvalidExtensionIsInvalidArgument", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tr := newTransport(t, b.config(t))
		ev := testEvent("a.b")
		ev.SetExtension("weird", 1.5)
		if err := tr.Send(context.Background(), []*cloudevent.Event{ev}); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("Send: %v, want InvalidArgument", err)
		}
	})

	t.Run("NewFailsUnavailableWhenBrokerDown", func(t *testing.T) {
		t.Parallel()
		_, err := New(context.Background(), Config{URL: "amqp://guest:secret@127.0.0.1:1/"})
		if hub.Code(err) != hub.Unavailable {
			t.Fatalf("New: %v (code %v), want Unavailable", err, hub.Code(err))
		}
	})

	t.Run("BadCredentialsArePermissionDeniedAndRedacted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		cfg := b.config(t)
		cfg.URL = "amqp://guest:wrong-s3cret@127.0.0.1:5672/"
		_, err := New(context.Background(), cfg)
		if hub.Code(err) != hub.PermissionDenied {
			t.Fatalf("New: %v (code %v), want PermissionDenied", err, hub.Code(err))
		}
		if containsSecret(err, "wrong-s3cret") {
			t.Fatalf("error shows the password: %v", err)
		}
	})
}

func containsSecret(err error, s string) bool {
	return err != nil && strings.Contains(err.Error(), s)
}
