package rabbitmq

import (
	"errors"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// settleQueueType keeps a group working across the change of default queue type. A
// queue's type is fixed at creation, and declaring an existing classic queue as
// quorum fails with PRECONDITION_FAILED (inequivalent arg 'x-queue-type'), which would
// stop every consumer of a deployment that upgrades. So when cfg.QueueType is the
// default, the main queue is declared once on a throwaway channel (a failed
// declaration closes it); if the broker refuses and the classic declaration of the
// queue matches what exists, cfg switches to classic for this consumer, with a warning, and the caller's declarations
// then match what exists. An explicit queue_type is never second-guessed: a mismatch
// there is reported as the broker's error.
// defaulted says QueueType came from the default; it is cleared once settled.
func settleQueueType(conn *amqp.Connection, cfg *Config, defaulted *bool) error {
	if !*defaulted || cfg.QueueType != QueueQuorum {
		return nil
	}
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	_, err = ch.QueueDeclare(cfg.Queue, true, false, false, false, queueArgs(cfg, cfg.retryQueue(), 0))
	var aerr *amqp.Error
	if err == nil || !errors.As(err, &aerr) || aerr.Code != amqp.PreconditionFailed || !strings.Contains(aerr.Reason, "inequivalent arg") {
		_ = ch.Close()
		return err
	}
	// The broker names the first argument that differs, not always x-queue-type: the
	// queue is classic exactly when the classic declaration matches it.
	classic := *cfg
	classic.QueueType = QueueClassic
	refused := err
	if ch, err = conn.Channel(); err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(cfg.Queue, true, false, false, false, queueArgs(&classic, cfg.retryQueue(), 0)); err != nil {
		return refused // not a classic queue of ours either: report the first refusal
	}
	_ = ch.Close()
	cfg.QueueType = QueueClassic
	*defaulted = false
	cfg.Logger.Warn("rabbitmq: the queue exists as a classic queue; keeping it (quorum is the default for new queues: set queue_type: classic to silence this, or migrate the queue)",
		"queue", cfg.Queue, "broker", aerr.Reason)
	return nil
}
