package modules

import (
	"context"
	"errors"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/watermill"
)

func init() { registry.Register(new(WatermillSource)) }

// WatermillSource consumes a Watermill Pub/Sub topic under the adapter and publishes
// every event into the hub (source.watermill); a message is acked once Publish
// returned, nacked when it failed, and published to dead_letter_topic after
// max_deliveries (counted in this process: neither Pub/Sub reports a count) or at once
// when malformed. Its keys: pubsub, url, consumer and watermill.ConsumerConfig's (topic,
// group required: amqp's queue is <topic>_<group>, redisstream's consumer group).
type WatermillSource struct {
	watermillPubSub `yaml:",inline"`
	// Consumer names this member of the group (redisstream). Default the host name.
	Consumer                 string `yaml:"consumer"`
	watermill.ConsumerConfig `yaml:",inline"`

	c *watermill.Consumer
}

// HubModule registers source.watermill.
func (*WatermillSource) HubModule() registry.Info {
	return registry.Info{ID: "source.watermill", New: func() registry.Module { return new(WatermillSource) },
		Doc: "any Watermill Pub/Sub topic under the adapter (amqp or redisstream): published into the hub, acked after Publish, dead-lettered"}
}

// Validate checks the pubsub, the URL and the consumer config without connecting.
func (m *WatermillSource) Validate() error {
	errs := m.validate()
	if m.Group == "" {
		errs = append(errs, registry.Field("group", "required (the consumer group)"))
	}
	if m.ConnectInBackground {
		errs = append(errs, registry.Field("connect_in_background", "a source connects at start; it is a transport key"))
	}
	c := m.WithDefaults()
	errs = append(errs, c.Validate())
	return errors.Join(errs...)
}

// Start builds the subscriber and the dead-letter publisher and consumes.
func (m *WatermillSource) Start(ctx context.Context, rt *registry.Runtime) error {
	sub, err := m.subscriber(m.Group, m.Consumer)
	if err != nil {
		return hub.Wrap(watermill.DefaultErrorCode(err), err)
	}
	dlq, err := m.publisher()
	if err != nil {
		_ = sub.Close()
		return hub.Wrap(watermill.DefaultErrorCode(err), err)
	}
	cfg := m.ConsumerConfig
	cfg.DeadLetter, cfg.CloseSubscriber = dlq, true
	cfg.Logger, cfg.Metrics = rt.Logger, rt.StreamMetrics
	if rt.Schemas != nil {
		cfg.Versions = rt.Schemas
	}
	if err := m.keepDeadLetters(&cfg); err != nil {
		_, _ = sub.Close(), dlq.Close()
		return err
	}
	c, err := watermill.NewConsumer(sub, cfg)
	if err == nil {
		err = c.Start(context.WithoutCancel(ctx), publishHandler(rt))
	}
	if err != nil {
		_, _ = sub.Close(), dlq.Close()
		return err
	}
	m.c = c
	return nil
}

// keepDeadLetters declares a queue for the dead-letter topic on amqp, where a fanout
// exchange no queue is bound to would drop the dead letters; a redis stream keeps them
// by itself.
func (m *WatermillSource) keepDeadLetters(cfg *watermill.ConsumerConfig) error {
	if m.PubSub != pubsubAMQP {
		return nil
	}
	topic := cfg.DeadLetterTopic
	if topic == "" {
		topic = cfg.Topic + watermill.DeadLetterSuffix
	}
	sub, err := m.subscriber(m.Group, "")
	if err != nil {
		return hub.Wrap(watermill.DefaultErrorCode(err), err)
	}
	defer sub.Close()
	if init, ok := sub.(message.SubscribeInitializer); ok {
		if err := init.SubscribeInitialize(topic); err != nil {
			return hub.Wrap(watermill.DefaultErrorCode(err), fmt.Errorf("declare the dead-letter queue of %s: %w", topic, err))
		}
	}
	return nil
}

// Close stops consuming and drains running handlers.
func (m *WatermillSource) Close(context.Context) error {
	if m.c == nil {
		return nil
	}
	return m.c.Close()
}

var (
	_ registry.SourceModule = (*WatermillSource)(nil)
	_ registry.Validator    = (*WatermillSource)(nil)
)
