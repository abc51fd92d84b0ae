package rabbitmq

import (
	amqp "github.com/rabbitmq/amqp091-go"
)

// Topology of one consumer group (queue Q on exchange E):
//
//	E (topic, durable) --binding keys = hub patterns--> Q
//	Q   --nack, x-dead-letter-routing-key--> Q.retry   (via the default exchange)
//	Q.retry (x-message-ttl = RetryDelay) --expiry, dead-letter--> Q
//	Q.dlq   <- published by the consumer, with the reason in headers
//
// A failed event is nacked without requeue, so RabbitMQ moves it to Q.retry, where it
// waits RetryDelay and then expires back into Q. The broker counts each round in the
// x-death header, which is the retry count: no hot requeue loop, no client-side timer,
// nothing lost if the consumer dies mid-delay.

func declareExchange(ch *amqp.Channel, name string) error {
	return ch.ExchangeDeclare(name, amqp.ExchangeTopic, true, false, false, false, nil)
}

func queueArgs(cfg *Config, deadLetterTo string, ttlMillis int64) amqp.Table {
	args := amqp.Table{}
	if cfg.QueueType == QueueQuorum {
		args[amqp.QueueTypeArg] = amqp.QueueTypeQuorum
	}
	if deadLetterTo != "" {
		args["x-dead-letter-exchange"] = ""
		args["x-dead-letter-routing-key"] = deadLetterTo
		if cfg.QueueType == QueueQuorum {
			// Quorum queues dead-letter at-most-once unless asked; at-least-once needs
			// reject-publish overflow.
			args["x-dead-letter-strategy"] = "at-least-once"
			args[amqp.QueueOverflowArg] = amqp.QueueOverflowRejectPublish
		}
	}
	if ttlMillis > 0 {
		args[amqp.QueueMessageTTLArg] = ttlMillis
	}
	return args
}

// declareConsumer declares the exchange, the group's three queues and its bindings.
// Declaring is idempotent, so it runs on every (re)connect.
func declareConsumer(ch *amqp.Channel, cfg *Config) error {
	if err := declareExchange(ch, cfg.Exchange); err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(cfg.Queue, true, false, false, false, queueArgs(cfg, cfg.retryQueue(), 0)); err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(cfg.retryQueue(), true, false, false, false, queueArgs(cfg, cfg.Queue, cfg.RetryDelay.Milliseconds())); err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(DLQName(cfg.Queue), true, false, false, false, queueArgs(cfg, "", 0)); err != nil {
		return err
	}
	for _, key := range bindingKeys(cfg.Patterns) {
		if err := ch.QueueBind(cfg.Queue, key, cfg.Exchange, false, nil); err != nil {
			return err
		}
	}
	return nil
}

// bindingKeys maps hub patterns to RabbitMQ binding keys. The syntax is the same, with
// one exception: the hub's bare "*" means "every type except hub.*", which a binding
// cannot express, so it binds "#" and the consumer drops hub.* (see wanted).
func bindingKeys(patterns []string) []string {
	keys := make([]string, 0, len(patterns))
	for _, p := range patterns {
		if p == "*" {
			p = "#"
		}
		keys = append(keys, p)
	}
	return keys
}
