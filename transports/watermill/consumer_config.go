package watermill

import (
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"go.opentelemetry.io/otel/trace"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Defaults of ConsumerConfig.
const (
	// DefaultMaxDeliveries: a message whose handler failed on its third delivery goes to
	// the dead-letter topic (R4.6's "more than 3 retries" counts the same way in the
	// stream transports).
	DefaultMaxDeliveries = 3
	// DefaultConcurrency is one subscription, one handler at a time: the subscriber's
	// order is kept.
	DefaultConcurrency = 1
	// DefaultDrainTimeout bounds how long Close waits for running handlers.
	DefaultDrainTimeout = 10 * time.Second
	// DeadLetterSuffix makes the default dead-letter topic, "<topic>.dlq".
	DeadLetterSuffix = ".dlq"
	// NeverDeadLetter as MaxDeliveries retries a failing message for ever.
	NeverDeadLetter = -1
)

// VersionChecker rejects events whose MAJOR data version the consumer cannot read (E5);
// schema.Registry implements it. A rejected event is dead-lettered at once.
type VersionChecker interface {
	CheckVersion(ev *cloudevent.Event) error
}

// ConsumerConfig configures a Consumer.
type ConsumerConfig struct {
	// Topic is the Watermill topic to subscribe to. Required.
	Topic string `yaml:"topic"`
	// Group labels metrics and logs (the subscriber's own config decides the consumer
	// group, e.g. watermill-amqp's queue or a JetStream durable).
	Group string `yaml:"group"`
	// Name labels metrics and logs. Default "watermill".
	Name string `yaml:"name"`
	// Concurrency is the number of subscriptions, each with one handler at a time.
	// Default 1, which keeps the subscriber's order.
	Concurrency int `yaml:"concurrency"`
	// MaxDeliveries: a message whose handler failed on its MaxDeliveries-th delivery is
	// moved to DeadLetterTopic instead of being nacked again. The count is the broker's
	// when the subscriber reports it (MetaDeliveries), else this process's own (lost on
	// restart, per process). Default 3; NeverDeadLetter (-1) nacks for ever.
	MaxDeliveries int `yaml:"max_deliveries"`
	// DeadLetterTopic receives dead letters through DeadLetter. Default "<Topic>.dlq".
	DeadLetterTopic string `yaml:"dead_letter_topic"`
	// DrainTimeout bounds how long Close waits for running handlers. Default 10s.
	DrainTimeout time.Duration `yaml:"drain_timeout"`

	// DeadLetter publishes dead letters: the message as received (UUID, payload,
	// metadata) plus MetaDLQ* metadata. Required unless MaxDeliveries is NeverDeadLetter;
	// then a malformed message, which no retry can fix, is logged and acked.
	DeadLetter message.Publisher `yaml:"-"`
	// CloseSubscriber makes Close close the Subscriber (and DeadLetter) too: for ones
	// built for this consumer alone.
	CloseSubscriber bool `yaml:"-"`
	// Quiesce, when set, runs in Close after the handlers returned and before the
	// subscriptions' context is cancelled; meanwhile the consumer nacks whatever the
	// subscriber still delivers. It is for subscribers whose delivery callbacks must
	// end before their output channel closes (watermill-nats closes it under running
	// callbacks otherwise): package natsjs drains the connection here.
	Quiesce func() `yaml:"-"`
	// Versions, when set, dead-letters events of an unknown MAJOR version (E5).
	Versions VersionChecker `yaml:"-"`
	// TracerProvider receives the handler spans; nil means the otel global provider.
	TracerProvider trace.TracerProvider `yaml:"-"`
	// Logger receives the R8 records. Default: discarded.
	Logger *slog.Logger `yaml:"-"`
	// Metrics receives the R8 counters. Default: unregistered.
	Metrics *hub.StreamMetrics `yaml:"-"`
}

func (c *ConsumerConfig) setDefaults() {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxDeliveries == 0 {
		c.MaxDeliveries = DefaultMaxDeliveries
	}
	if c.DeadLetterTopic == "" && c.Topic != "" {
		c.DeadLetterTopic = c.Topic + DeadLetterSuffix
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Metrics == nil {
		c.Metrics = hub.NewStreamMetrics(nil)
	}
}

// WithDefaults returns c with every unset field at its default.
func (c ConsumerConfig) WithDefaults() ConsumerConfig {
	c.setDefaults()
	return c
}

// Validate reports every invalid field by its YAML name. It checks the fields a config
// file can set; NewConsumer also requires DeadLetter (see its doc).
func (c *ConsumerConfig) Validate() error {
	var p problems
	if c.Topic == "" {
		p.add("topic", "required")
	}
	if c.Concurrency < 0 {
		p.add("concurrency", "must be positive, got %d", c.Concurrency)
	}
	if c.MaxDeliveries < NeverDeadLetter {
		p.add("max_deliveries", "must be -1 (never) or more, got %d", c.MaxDeliveries)
	}
	if c.DrainTimeout < 0 {
		p.add("drain_timeout", "must not be negative, got %s", c.DrainTimeout)
	}
	if c.DeadLetterTopic != "" && c.DeadLetterTopic == c.Topic {
		p.add("dead_letter_topic", "must differ from topic %q", c.Topic)
	}
	return p.err()
}
