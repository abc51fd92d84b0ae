package rabbitmq

import (
	"context"

	"github.com/koder/eventhub/hub"
	wm "github.com/koder/eventhub/transports/watermill"
)

// The RabbitMQ transport as a Watermill Pub/Sub: a Watermill topic is a durable topic
// exchange of its own (events are routed by type inside it), a consumer group is the
// durable queue "<topic>.<group>" with its retry queue and dead-letter queue. Watermill
// applications get the CloudEvents AMQP binding, publisher confirms, delayed retries
// and the DLQ tools of this package.

// NewWatermillPublisher returns a message.Publisher: Publish(topic, ...) sends through
// a Transport built from cfg with Exchange = topic (one per topic, kept until Close).
// Messages without CloudEvents metadata become events as mapping says
// (watermill.MessageToEvent). As with Transport, a message no queue is bound for fails
// with NotFound (Mandatory): subscribe, or SubscribeInitialize, first.
func NewWatermillPublisher(cfg Config, mapping wm.PubSubConfig) *wm.Publisher {
	return wm.NewPublisher(func(topic string) (hub.Transport, error) {
		c := cfg
		c.Exchange = topic
		return New(context.Background(), c)
	}, mapping)
}

// NewWatermillSubscriber returns a message.Subscriber whose Subscribe(ctx, topic)
// consumes the queue "<topic>.<group>" bound to the exchange topic, with cfg's
// consumer settings (MaxRetries, RetryDelay, Concurrency...). A nacked message goes
// through the retry queue; past MaxRetries it is dead-lettered. SubscribeInitialize
// declares the queue, so messages published before the first Subscribe are kept.
func NewWatermillSubscriber(cfg Config, group string) *wm.Subscriber {
	consumerConfig := func(topic string) Config {
		c := cfg
		c.Exchange = topic
		c.Queue = topic + "." + group
		return c
	}
	return wm.NewSubscriber(func(topic string) (hub.Consumer, error) {
		if group == "" {
			return nil, hub.Errorf(hub.InvalidArgument, "rabbitmq: a Watermill subscriber needs a group (its queue is <topic>.<group>)")
		}
		return NewConsumer(context.Background(), consumerConfig(topic))
	}, func(topic string) error {
		if group == "" {
			return hub.Errorf(hub.InvalidArgument, "rabbitmq: a Watermill subscriber needs a group (its queue is <topic>.<group>)")
		}
		c, err := NewConsumer(context.Background(), consumerConfig(topic)) // declares the topology
		if err != nil {
			return err
		}
		return c.Close()
	})
}
