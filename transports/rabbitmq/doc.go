// Package rabbitmq is the hub's RabbitMQ transport (B1, C1, E6, E7).
//
// The publisher (New, Open) sends each event to a durable topic exchange with the event
// type as routing key, so hub patterns are binding keys unchanged; messages are
// persistent; Send returns only when the broker confirmed every event (publisher
// confirms tracked asynchronously, many in flight per channel) and reports unroutable
// events (mandatory returns) as NotFound. The consumer (NewConsumer, OpenConsumer)
// reads a durable queue per consumer group, acks after the handler succeeds, retries a
// failed event after a delay through a TTL retry queue, and dead-letters it with the
// reason after Config.MaxRetries; DLQ offers list, inspect, replay and purge.
//
// The wire format is the CloudEvents binary mode mirrored onto AMQP 0-9-1 (see
// binding.go): any AMQP client reads `cloudEvents:`-prefixed headers and the data as the
// body. Connections recover on their own after a broker restart or a dropped
// connection; during an outage Send fails with Unavailable rather than guessing.
package rabbitmq
