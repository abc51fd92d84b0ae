package rabbitmq

import (
	"context"
	"errors"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TestHA_QuorumByDefault: a consumer group declared with the defaults gets quorum
// queues (its queue, retry queue and DLQ: redeclaring any of them as classic is
// refused by the broker), and a group whose queue already exists as classic (declared
// before quorum became the default) keeps working on it instead of failing.
func TestHA_QuorumByDefault(t *testing.T) {
	t.Parallel()
	t.Run("new", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		newConsumer(t, b.config(t))
		for _, q := range []string{b.queue, b.queue + ".retry", DLQName(b.queue)} {
			ch, err := b.conn.Channel()
			if err != nil {
				t.Fatal(err)
			}
			_, err = ch.QueueDeclare(q, true, false, false, false, amqp.Table{amqp.QueueTypeArg: amqp.QueueTypeClassic})
			var aerr *amqp.Error
			if !errors.As(err, &aerr) || aerr.Code != amqp.PreconditionFailed {
				t.Errorf("redeclaring %s as classic: %v, want PRECONDITION_FAILED (it should be quorum)", q, err)
			}
			if err == nil {
				_ = ch.Close()
			}
		}
	})
	t.Run("existing_classic_adopted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		classic := b.config(t)
		classic.QueueType = QueueClassic
		newConsumer(t, classic).Close()
		cfg := b.config(t)
		c := newConsumer(t, cfg)
		if c.cfg.QueueType != QueueClassic {
			t.Fatalf("QueueType = %q, want the existing classic queue kept", c.cfg.QueueType)
		}
		tr := newTransport(t, cfg)
		r := newRecorder()
		if err := c.Start(context.Background(), r.handle); err != nil {
			t.Fatal(err)
		}
		mustSend(t, tr, testEvent("user.created"))
		r.waitN(t, 1, "an event through the adopted classic queue")
	})
	t.Run("explicit_mismatch_fails", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		classic := b.config(t)
		classic.QueueType = QueueClassic
		newConsumer(t, classic).Close()
		cfg := b.config(t)
		cfg.QueueType = QueueQuorum
		if c, err := NewConsumer(context.Background(), cfg); err == nil {
			_ = c.Close()
			t.Fatal("an explicit quorum over an existing classic queue was accepted")
		}
	})
}
