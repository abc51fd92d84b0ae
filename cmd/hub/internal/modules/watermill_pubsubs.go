package modules

import (
	"fmt"
	"net/url"
	"os"

	wmlib "github.com/ThreeDotsLabs/watermill"
	wamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	wredis "github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
)

// The Watermill Pub/Subs the binary can build from config (pubsub: in a watermill
// section). They are the design's original transports, which the hub's own rabbitmq
// and redisstream packages replace for the reasons in docs/BENCHMARKS.md; a deployment
// that wants them, or their wire formats, picks them here. Library users wrap any other
// Pub/Sub with transports/watermill directly.
const (
	pubsubAMQP        = "amqp"        // watermill-amqp v3, durable pub/sub: a fanout exchange per topic, a durable queue per group
	pubsubRedisStream = "redisstream" // watermill-redisstream: a stream per topic, a consumer group per group
)

// watermillPubSub is the pubsub, url and connect_in_background keys shared by the
// watermill transport and source.
type watermillPubSub struct {
	// PubSub names the Watermill Pub/Sub: "amqp" or "redisstream". Required.
	PubSub string `yaml:"pubsub"`
	// URL is the broker: amqp:// or amqps:// for amqp, redis:// or rediss:// for
	// redisstream. Required.
	URL string `yaml:"url"`
	// ConnectInBackground builds the publisher at the first send, so the hub starts
	// while the broker is down (sends fail with Unavailable until it is up). Default false.
	ConnectInBackground bool `yaml:"connect_in_background"`
}

func (p *watermillPubSub) validate() []error {
	var errs []error
	schemes := map[string][]string{pubsubAMQP: {"amqp", "amqps"}, pubsubRedisStream: {"redis", "rediss"}}[p.PubSub]
	if schemes == nil {
		errs = append(errs, registry.Field("pubsub", "%q, want %s or %s", p.PubSub, pubsubAMQP, pubsubRedisStream))
	}
	switch u, err := url.Parse(p.URL); {
	case p.URL == "":
		errs = append(errs, registry.Field("url", "required"))
	case err != nil:
		errs = append(errs, registry.Field("url", "invalid URL"))
	case schemes != nil && u.Scheme != schemes[0] && u.Scheme != schemes[1]:
		errs = append(errs, registry.Field("url", "scheme %q, want %s or %s for pubsub %s", u.Scheme, schemes[0], schemes[1], p.PubSub))
	}
	return errs
}

// amqpConfig is watermill-amqp's durable pub/sub with publisher confirms (the hub's
// Transport contract: Send returns once the broker has the event).
func (p *watermillPubSub) amqpConfig(group string) wamqp.Config {
	cfg := wamqp.NewDurablePubSubConfig(p.URL, wamqp.GenerateQueueNameTopicNameWithSuffix(group))
	cfg.Publish.ConfirmDelivery = true
	return cfg
}

func (p *watermillPubSub) redisClient() (*redis.Client, error) {
	opts, err := redis.ParseURL(p.URL)
	if err != nil {
		return nil, err
	}
	return redis.NewClient(opts), nil
}

// publisher builds the configured Publisher.
func (p *watermillPubSub) publisher() (message.Publisher, error) {
	switch p.PubSub {
	case pubsubAMQP:
		return wamqp.NewPublisher(p.amqpConfig(""), wmlib.NopLogger{})
	case pubsubRedisStream:
		client, err := p.redisClient()
		if err != nil {
			return nil, err
		}
		return wredis.NewPublisher(wredis.PublisherConfig{Client: client}, wmlib.NopLogger{})
	}
	return nil, fmt.Errorf("unknown pubsub %q", p.PubSub)
}

// subscriber builds the configured Subscriber for a consumer group; consumer names the
// member (redisstream), default the host name.
func (p *watermillPubSub) subscriber(group, consumer string) (message.Subscriber, error) {
	switch p.PubSub {
	case pubsubAMQP:
		return wamqp.NewSubscriber(p.amqpConfig(group), wmlib.NopLogger{})
	case pubsubRedisStream:
		client, err := p.redisClient()
		if err != nil {
			return nil, err
		}
		if consumer == "" {
			consumer, _ = os.Hostname()
		}
		return wredis.NewSubscriber(wredis.SubscriberConfig{Client: client, ConsumerGroup: group, Consumer: consumer}, wmlib.NopLogger{})
	}
	return nil, fmt.Errorf("unknown pubsub %q", p.PubSub)
}
