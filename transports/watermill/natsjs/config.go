package natsjs

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/watermill"
)

// URL schemes accepted by Config.URL.
const (
	Scheme    = "nats"
	SchemeTLS = "tls"
)

// Defaults for Config. Each is the value a zero field takes.
const (
	DefaultSubject        = "events"
	DefaultMode           = watermill.ModeBinary
	DefaultMaxAge         = 7 * 24 * time.Hour // E8's retention
	DefaultDuplicates     = 2 * time.Minute    // JetStream's own default window
	DefaultMaxDeliveries  = watermill.DefaultMaxDeliveries
	DefaultAckWait        = 30 * time.Second
	DefaultRetryDelay     = time.Second
	DefaultMaxAckPending  = 256
	DefaultConcurrency    = 1
	DefaultDrainTimeout   = 10 * time.Second
	DefaultConnectTimeout = 5 * time.Second
	DefaultReconnectWait  = 500 * time.Millisecond
	DefaultName           = "nats"
	// DeadLetterStreamSuffix names the default dead-letter stream, "<stream>_dlq".
	DeadLetterStreamSuffix = "_dlq"
)

// Config configures the publisher (New) and the consumer (NewConsumer) of one JetStream
// stream. Fields only one side reads say so. Durations in YAML are strings ("5s").
type Config struct {
	// URL is the server, nats://[user:pass@]host:port or tls://; several separated by
	// commas. Required.
	URL string `yaml:"url"`
	// Stream is the JetStream stream. Required.
	Stream string `yaml:"stream"`
	// Subject is the subject prefix: an event of type T is published to "<Subject>.T",
	// so NATS wildcards filter by type as hub patterns do. Default "events".
	Subject string `yaml:"subject"`
	// CreateStream creates Stream (subjects "<Subject>.>", file storage) and the
	// consumer's dead-letter stream when missing. Default true; false expects them made
	// by an operator.
	CreateStream *bool `yaml:"create_stream"`
	// MaxAge is the retention of a created stream. Default 7 days (E8); negative keeps
	// everything.
	MaxAge time.Duration `yaml:"max_age"`
	// Duplicates is a created stream's deduplication window: a re-sent event (same
	// id, Nats-Msg-Id) within it is stored once. Default 2m.
	Duplicates time.Duration `yaml:"duplicates"`
	// Mode is the CloudEvents content mode: "binary" (default) or "structured".
	Mode watermill.Mode `yaml:"mode"`

	// Durable is the durable consumer (the consumer group) (consumer only, required
	// there). Consumers with the same Durable share the stream's events.
	Durable string `yaml:"durable"`
	// Patterns are hub patterns on the type (consumer only). Default ["#"]. One pattern
	// without '#' becomes the consumer's subject filter; otherwise the consumer reads
	// every subject and skips (acks) events no pattern matches.
	Patterns []string `yaml:"patterns"`
	// MaxDeliveries: a failed event is redelivered until its MaxDeliveries-th delivery
	// has failed, then moved to the dead-letter subject (consumer only). Default 3; -1
	// never dead-letters.
	MaxDeliveries int `yaml:"max_deliveries"`
	// AckWait is how long JetStream waits for an ack before it redelivers (consumer
	// only). It must exceed the slowest handler times MaxAckPending / Concurrency.
	// Default 30s.
	AckWait time.Duration `yaml:"ack_wait"`
	// RetryDelay is how long a failed event waits before its redelivery (a delayed
	// nak) (consumer only). Default 1s.
	RetryDelay time.Duration `yaml:"retry_delay"`
	// MaxAckPending bounds the events delivered and not yet acked (consumer only).
	// Default 256.
	MaxAckPending int `yaml:"max_ack_pending"`
	// Concurrency is the number of handlers run at once (consumer only). Default 1,
	// which keeps the stream's order.
	Concurrency int `yaml:"concurrency"`
	// DrainTimeout bounds how long Close waits for running handlers. Default 10s.
	DrainTimeout time.Duration `yaml:"drain_timeout"`
	// DeadLetterStream is the stream dead letters are stored in (consumer only).
	// Default "<Stream>_dlq".
	DeadLetterStream string `yaml:"dead_letter_stream"`
	// DeadLetterSubject is where this consumer's dead letters go (consumer only).
	// Default "<Subject>_dlq.<Durable>", outside Stream's subjects.
	DeadLetterSubject string `yaml:"dead_letter_subject"`

	// ConnectTimeout bounds one connection attempt. Default 5s.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// ConnectInBackground makes New and NewConsumer return without a server: the
	// client keeps dialling and Send fails with Unavailable until it is up. Default
	// false: a server that cannot be reached at start is reported at once.
	ConnectInBackground bool `yaml:"connect_in_background"`
	// ReconnectWait is the pause between reconnect attempts. Default 500ms.
	ReconnectWait time.Duration `yaml:"reconnect_wait"`
	// Name labels metrics, logs and the NATS connection. Default "nats".
	Name string `yaml:"name"`

	// Versions, when set, dead-letters events of an unknown MAJOR version (consumer only).
	Versions watermill.VersionChecker `yaml:"-"`
	// TracerProvider receives the handler spans; nil means the otel global provider.
	TracerProvider trace.TracerProvider `yaml:"-"`
	// Metrics receives the R8 counters; nil keeps unregistered ones.
	Metrics *hub.StreamMetrics `yaml:"-"`
	// Logger receives the R8 records; nil discards them.
	Logger *slog.Logger `yaml:"-"`
}

func (c *Config) setDefaults() {
	if c.Subject == "" {
		c.Subject = DefaultSubject
	}
	if c.CreateStream == nil {
		t := true
		c.CreateStream = &t
	}
	if c.MaxAge == 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.Duplicates == 0 {
		c.Duplicates = DefaultDuplicates
	}
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
	if len(c.Patterns) == 0 {
		c.Patterns = []string{"#"}
	}
	if c.MaxDeliveries == 0 {
		c.MaxDeliveries = DefaultMaxDeliveries
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = DefaultMaxAckPending
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.DeadLetterStream == "" && c.Stream != "" {
		c.DeadLetterStream = c.Stream + DeadLetterStreamSuffix
	}
	if c.DeadLetterSubject == "" && c.Durable != "" {
		c.DeadLetterSubject = c.Subject + "_dlq." + c.Durable
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.ReconnectWait == 0 {
		c.ReconnectWait = DefaultReconnectWait
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Metrics == nil {
		c.Metrics = hub.NewStreamMetrics(nil)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// WithDefaults returns c with every unset field at its default, on a copy, without
// connecting: what hub lint validates.
func (c Config) WithDefaults() Config {
	c.setDefaults()
	return c
}

// Validate reports every invalid publisher field by its YAML name; ValidateConsumer
// adds the consumer's.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("natsjs: %s: "+format, append([]any{field}, args...)...))
	}
	if c.URL == "" {
		bad("url", "required")
	}
	for s := range strings.SplitSeq(c.URL, ",") {
		if c.URL == "" {
			break
		}
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			bad("url", "invalid URL")
		} else if u.Scheme != Scheme && u.Scheme != SchemeTLS {
			bad("url", "scheme %q, want %s or %s", u.Scheme, Scheme, SchemeTLS)
		}
	}
	if err := checkStreamName(c.Stream); err != nil {
		bad("stream", "%v", err)
	}
	if err := checkSubject(c.Subject); err != nil {
		bad("subject", "%v", err)
	}
	if c.Mode != watermill.ModeBinary && c.Mode != watermill.ModeStructured {
		bad("mode", "%q, want %s or %s", c.Mode, watermill.ModeBinary, watermill.ModeStructured)
	}
	for name, d := range map[string]time.Duration{"duplicates": c.Duplicates, "connect_timeout": c.ConnectTimeout,
		"reconnect_wait": c.ReconnectWait, "drain_timeout": c.DrainTimeout, "ack_wait": c.AckWait, "retry_delay": c.RetryDelay} {
		if d < 0 {
			bad(name, "must not be negative, got %s", d)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return hub.Wrap(hub.InvalidArgument, errors.Join(errs...))
}

// ValidateConsumer checks the publisher fields and the consumer's (Durable required).
func (c *Config) ValidateConsumer() error {
	err := c.Validate()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("natsjs: %s: "+format, append([]any{field}, args...)...))
	}
	if c.Durable == "" {
		bad("durable", "required for a consumer")
	} else if err := checkStreamName(c.Durable); err != nil {
		bad("durable", "%v", err)
	}
	for i, p := range c.Patterns {
		if _, err := hub.CompilePattern(p); err != nil {
			bad(fmt.Sprintf("patterns[%d]", i), "%v", err)
		}
	}
	if c.MaxDeliveries < watermill.NeverDeadLetter {
		bad("max_deliveries", "must be -1 (never) or more, got %d", c.MaxDeliveries)
	}
	if c.MaxAckPending < 0 {
		bad("max_ack_pending", "must be positive, got %d", c.MaxAckPending)
	}
	if c.Concurrency < 0 {
		bad("concurrency", "must be positive, got %d", c.Concurrency)
	}
	if c.DeadLetterStream != "" {
		if e := checkStreamName(c.DeadLetterStream); e != nil {
			bad("dead_letter_stream", "%v", e)
		} else if c.DeadLetterStream == c.Stream {
			bad("dead_letter_stream", "must differ from stream %q", c.Stream)
		}
	}
	if c.DeadLetterSubject != "" {
		if e := checkSubject(c.DeadLetterSubject); e != nil {
			bad("dead_letter_subject", "%v", e)
		} else if strings.HasPrefix(c.DeadLetterSubject, c.Subject+".") {
			bad("dead_letter_subject", "%q is inside the stream's subjects %s.>", c.DeadLetterSubject, c.Subject)
		}
	}
	if len(errs) == 0 {
		return err
	}
	return errors.Join(err, hub.Wrap(hub.InvalidArgument, errors.Join(errs...)))
}

func (c *Config) createStream() bool { return c.CreateStream == nil || *c.CreateStream }

// checkStreamName applies JetStream's rules for stream and consumer names.
func checkStreamName(s string) error {
	switch {
	case s == "":
		return errors.New("required")
	case len(s) > 255:
		return errors.New("longer than 255 characters")
	case strings.ContainsAny(s, ".*> \t\r\n/\\"):
		return fmt.Errorf("%q must not contain '.', '*', '>', blanks or path separators", s)
	}
	return nil
}

// checkSubject checks a literal subject: dot-separated, non-empty tokens without
// wildcards or blanks.
func checkSubject(s string) error {
	if s == "" {
		return errors.New("required")
	}
	for tok := range strings.SplitSeq(s, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n") {
			return fmt.Errorf("%q is not a literal subject (non-empty tokens, no wildcards or blanks)", s)
		}
	}
	return nil
}
