package rabbitmq

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Defaults for Config. Each is the value a zero field takes.
const (
	DefaultExchange       = "eventhub"
	DefaultMode           = ModeBinary
	DefaultChannels       = 4
	DefaultMaxInFlight    = 512
	DefaultPrefetch       = 100
	DefaultConcurrency    = 1
	DefaultMaxRetries     = 3
	DefaultRetryDelay     = 5 * time.Second
	DefaultDrainTimeout   = 30 * time.Second
	DefaultDialTimeout    = 5 * time.Second
	DefaultReconnectMin   = 200 * time.Millisecond
	DefaultReconnectMax   = 10 * time.Second
	DefaultQueueType      = QueueQuorum
	DefaultConfirmTimeout = 30 * time.Second
	DefaultDLQScanLimit   = 10000
	transportLabel        = "rabbitmq"
	maxRetriesDisabled    = -1
	defaultConsumerLabel  = "eventhub"
)

// Wire modes (Config.Mode).
const (
	// ModeBinary puts every attribute in `cloudEvents:`-prefixed headers and the data in
	// the body, so any AMQP client reads the payload as-is.
	ModeBinary = "binary"
	// ModeStructured sends the whole event as application/cloudevents+json in the body.
	ModeStructured = "structured"
)

// Queue types (Config.QueueType).
const (
	QueueClassic = "classic"
	// QueueQuorum replicates the queue with Raft; dead-lettering then runs at-least-once.
	QueueQuorum = "quorum"
)

// VersionChecker rejects events whose MAJOR data version this consumer cannot read
// (E5/E7). schema.Registry satisfies it. Any error sends the message to the DLQ at once:
// retrying cannot make an unknown major readable.
type VersionChecker interface {
	CheckVersion(ev *cloudevent.Event) error
}

// Config configures both the publisher (New) and the consumer (NewConsumer). Fields
// that only one side reads say so. Durations in YAML are strings ("5s").
type Config struct {
	// URL is the broker, amqp://user:pass@host:port/vhost or amqps://. Required.
	URL string `yaml:"url"`
	// Exchange is the durable topic exchange events are published to and queues are
	// bound on. Default "eventhub".
	Exchange string `yaml:"exchange"`
	// Mode is the wire format: "binary" (default) or "structured".
	Mode string `yaml:"mode"`
	// Mandatory makes the broker return messages no queue is bound for; Send then fails
	// with NotFound instead of reporting a message nobody will read as delivered.
	// Default true (nil).
	Mandatory *bool `yaml:"mandatory"`

	// Channels is the publisher's pool of confirm-mode channels. Default 4.
	Channels int `yaml:"channels"`
	// MaxInFlight bounds unconfirmed publishes per channel; Send waits for room.
	// Default 512.
	MaxInFlight int `yaml:"max_in_flight"`
	// ConfirmTimeout bounds how long Send waits for a confirm when ctx has no deadline.
	// Default 30s.
	ConfirmTimeout time.Duration `yaml:"confirm_timeout"`

	// Queue is the consumer group's durable queue (consumer only, required there).
	// Its retry queue is Queue+".retry" and its dead-letter queue Queue+".dlq".
	Queue string `yaml:"queue"`
	// Patterns are hub patterns (RabbitMQ topic syntax) bound to Queue. Default ["#"].
	// A bare "*" is the hub's catch-all: every type except hub.*.
	Patterns []string `yaml:"patterns"`
	// QueueType is "quorum" (default: replicated by Raft on a cluster, see
	// docs/rabbitmq.md) or "classic". It applies to the group's queue, its retry queue
	// and its DLQ. When it is left empty and the queue already exists as a classic
	// queue (declared before quorum became the default), the consumer keeps the
	// classic queue and logs a warning instead of failing: RabbitMQ cannot change a
	// queue's type in place.
	QueueType string `yaml:"queue_type"`
	// Prefetch is the consumer's QoS window (unacked deliveries). Default 100.
	Prefetch int `yaml:"prefetch"`
	// Concurrency is the number of handlers run at once. Default 1, which keeps order.
	Concurrency int `yaml:"concurrency"`
	// MaxRetries is how often a failed event is redelivered before it goes to the DLQ.
	// Default 3; -1 means never retry.
	MaxRetries int `yaml:"max_retries"`
	// RetryDelay is how long a failed event waits in the retry queue. Default 5s.
	// Changing it changes the retry queue's arguments: delete that queue first.
	RetryDelay time.Duration `yaml:"retry_delay"`
	// DrainTimeout bounds how long Close waits for running handlers. Default 30s.
	DrainTimeout time.Duration `yaml:"drain_timeout"`
	// ConsumerName labels logs and the AMQP consumer tag. Default "eventhub".
	ConsumerName string `yaml:"consumer_name"`

	// ConnectInBackground makes New and NewConsumer return without waiting for the
	// broker: the recovery loop dials, and Send fails with Unavailable until it is up.
	// Default false: a broker that cannot be reached at start is reported at once.
	ConnectInBackground bool `yaml:"connect_in_background"`
	// DialTimeout bounds one connection attempt. Default 5s.
	DialTimeout time.Duration `yaml:"dial_timeout"`
	// ReconnectMin and ReconnectMax bound the exponential backoff between reconnects.
	// Defaults 200ms and 10s.
	ReconnectMin time.Duration `yaml:"reconnect_min"`
	ReconnectMax time.Duration `yaml:"reconnect_max"`

	// TLS configures amqps:// connections; nil uses the system roots.
	TLS *tls.Config `yaml:"-"`
	// Versions, when set, gates consumed events by MAJOR version (consumer only).
	Versions VersionChecker `yaml:"-"`
	// Metrics receives the R8 counters; nil keeps unregistered ones.
	Metrics *hub.StreamMetrics `yaml:"-"`
	// Logger receives the R8 records; nil discards them.
	Logger *slog.Logger `yaml:"-"`
}

func (c *Config) setDefaults() {
	if c.Exchange == "" {
		c.Exchange = DefaultExchange
	}
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
	if c.Mandatory == nil {
		t := true
		c.Mandatory = &t
	}
	if c.Channels == 0 {
		c.Channels = DefaultChannels
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.ConfirmTimeout == 0 {
		c.ConfirmTimeout = DefaultConfirmTimeout
	}
	if len(c.Patterns) == 0 {
		c.Patterns = []string{"#"}
	}
	if c.QueueType == "" {
		c.QueueType = DefaultQueueType
	}
	if c.Prefetch == 0 {
		c.Prefetch = DefaultPrefetch
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.ConsumerName == "" {
		c.ConsumerName = defaultConsumerLabel
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.ReconnectMin == 0 {
		c.ReconnectMin = DefaultReconnectMin
	}
	if c.ReconnectMax == 0 {
		c.ReconnectMax = DefaultReconnectMax
	}
	if c.Metrics == nil {
		c.Metrics = hub.NewStreamMetrics(nil)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// WithDefaults returns the configuration New, NewConsumer and the DLQ tools would
// use: c with every unset field given its default, on a copy, without connecting.
// Tools that check a configuration before running (hub lint) validate this, so they
// never carry a copy of the defaults that could drift from the library's.
func (c Config) WithDefaults() Config {
	c.setDefaults()
	return c
}

// Validate reports every invalid field by its YAML name. It checks the publisher
// fields; validateConsumer adds the consumer's.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("rabbitmq: %s: "+format, append([]any{field}, args...)...))
	}
	if c.URL == "" {
		bad("url", "required")
	} else if u, err := url.Parse(c.URL); err != nil {
		bad("url", "invalid URL")
	} else if u.Scheme != Scheme && u.Scheme != SchemeTLS {
		bad("url", "scheme %q, want %s or %s", u.Scheme, Scheme, SchemeTLS)
	}
	if c.Mode != ModeBinary && c.Mode != ModeStructured {
		bad("mode", "%q, want %s or %s", c.Mode, ModeBinary, ModeStructured)
	}
	if c.Channels < 0 {
		bad("channels", "must be positive, got %d", c.Channels)
	}
	if c.MaxInFlight < 0 {
		bad("max_in_flight", "must be positive, got %d", c.MaxInFlight)
	}
	if c.QueueType != QueueClassic && c.QueueType != QueueQuorum {
		bad("queue_type", "%q, want %s or %s", c.QueueType, QueueClassic, QueueQuorum)
	}
	if c.Prefetch < 0 || c.Prefetch > 65535 {
		bad("prefetch", "must be 1..65535, got %d", c.Prefetch)
	}
	if c.Concurrency < 0 {
		bad("concurrency", "must be positive, got %d", c.Concurrency)
	}
	if c.MaxRetries < maxRetriesDisabled {
		bad("max_retries", "must be -1 or more, got %d", c.MaxRetries)
	}
	for name, d := range map[string]time.Duration{"confirm_timeout": c.ConfirmTimeout, "retry_delay": c.RetryDelay,
		"drain_timeout": c.DrainTimeout, "dial_timeout": c.DialTimeout, "reconnect_min": c.ReconnectMin, "reconnect_max": c.ReconnectMax} {
		if d < 0 {
			bad(name, "must not be negative, got %s", d)
		}
	}
	if c.ReconnectMax < c.ReconnectMin {
		bad("reconnect_max", "%s is below reconnect_min %s", c.ReconnectMax, c.ReconnectMin)
	}
	for i, p := range c.Patterns {
		if _, err := hub.CompilePattern(p); err != nil {
			bad(fmt.Sprintf("patterns[%d]", i), "%v", err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return hub.Wrap(hub.InvalidArgument, redactErr(errors.Join(errs...), c.URL))
}

func (c *Config) validateConsumer() error {
	err := c.Validate()
	if c.Queue == "" {
		err = errors.Join(err, hub.Errorf(hub.InvalidArgument, "rabbitmq: queue: required for a consumer"))
	}
	return err
}

func (c *Config) mandatory() bool { return c.Mandatory == nil || *c.Mandatory }

func (c *Config) retryQueue() string { return c.Queue + ".retry" }

// DLQName returns the dead-letter queue of a consumer group queue.
func DLQName(queue string) string { return queue + ".dlq" }
