package streams

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Defaults of ConsumerConfig. They are the values of seed 000's R4 where it names one.
const (
	// DefaultStart is the group's start position at creation (R4.1): only future events.
	DefaultStart = "$"
	// DefaultCount is the batch size of one group read (R4.2, COUNT 100).
	DefaultCount = 100
	// DefaultBlock is how long one group read waits for new entries (R4.2, BLOCK 5000).
	DefaultBlock = 5 * time.Second
	// DefaultClaimMinIdle is how long an entry must sit un-acked before another attempt
	// claims it (R4.5). It must exceed the slowest handler times the batch size, or a
	// slow but healthy handler gets its entry run twice.
	DefaultClaimMinIdle = 30 * time.Second
	// DefaultClaimInterval is how often the claimer scans the pending list.
	DefaultClaimInterval = 5 * time.Second
	// DefaultMaxDeliveries: an entry is dead-lettered once it has been delivered more
	// than this many times without success (R4.6: "more than 3 retries").
	DefaultMaxDeliveries = 3
	// DefaultConcurrency keeps per-stream order (E6): one handler at a time.
	DefaultConcurrency = 1
	// DefaultDrainTimeout bounds how long Close waits for in-flight handlers.
	DefaultDrainTimeout = 10 * time.Second
)

// VersionChecker rejects events whose payload version the consumer cannot read (E5);
// schema.Registry implements it. Any error sends the entry to the dead-letter at once.
type VersionChecker interface {
	CheckVersion(ev *cloudevent.Event) error
}

// ConsumerConfig configures a consumer of either stream transport (redisstream's and
// kdbstream's NewConsumer, eventbus.Bus.NewConsumer): the same value runs the same R4
// loop on both buses, so a consumer's configuration survives the cutover (R9) as is.
// The zero value of every optional field means its default.
type ConsumerConfig struct {
	// Stream is the stream key to consume (required; reserved prefix rules apply).
	Stream string `yaml:"stream"`
	// Group is the consumer group (required), named per R3: "<service>-<purpose>".
	Group string `yaml:"group"`
	// Consumer names this consumer inside the group (default: the host name). Keep it
	// stable across restarts of the same instance: a restarted consumer first re-reads
	// its own pending entries, which only works under the same name.
	Consumer string `yaml:"consumer"`
	// Start is the group's start position when the group is created: "$" (default, new
	// entries only), "0" (the whole stream) or an entry id. Ignored if the group exists.
	Start string `yaml:"start"`
	// Count is the maximum number of entries per read (default 100).
	Count int `yaml:"count"`
	// Block is how long one read waits for new entries (default 5s).
	Block time.Duration `yaml:"block"`
	// ClaimMinIdle is the idle time after which a pending entry is claimed and retried
	// (default 30s).
	ClaimMinIdle time.Duration `yaml:"claim_min_idle"`
	// ClaimInterval is how often pending entries are scanned for claiming (default 5s).
	ClaimInterval time.Duration `yaml:"claim_interval"`
	// MaxDeliveries: more deliveries than this move the entry to the dead-letter stream
	// (default 3). An entry whose handler fails on its MaxDeliveries-th delivery is
	// dead-lettered right away with that error instead of waiting for one more claim.
	MaxDeliveries int `yaml:"max_deliveries"`
	// DLQStream is the dead-letter stream (default DLQStreamFor(Stream): "<Stream>:dlq",
	// or "events.dlq" for a per-category stream).
	DLQStream string `yaml:"dlq_stream"`
	// Concurrency is the number of handlers running at once (default 1, which keeps
	// per-stream order; above 1, entries of one read run in parallel and order is lost).
	Concurrency int `yaml:"concurrency"`
	// DrainTimeout bounds how long Close waits for in-flight handlers (default 10s).
	DrainTimeout time.Duration `yaml:"drain_timeout"`
	// IdempotencyTTL is how long a processed event id is remembered (default 24h, R5).
	IdempotencyTTL time.Duration `yaml:"idempotency_ttl"`
	// DefaultSource fills the CloudEvents source of entries written without one (a
	// hand-written R2 entry has none).
	DefaultSource string `yaml:"default_source"`
	// Encoding is the entries' format: EncodingR2 (default) or EncodingSeed001. An
	// entry that does not decode in it is malformed and goes to the DLQ (N2).
	Encoding string `yaml:"encoding"`
	// AllowEmptyFields accepts R2 entries whose mandatory fields are present but empty
	// (actor "", subject_id "", as older versions of the hub wrote them), reading each
	// as unset. Off by default: R2 makes all seven fields mandatory, so such an entry is
	// malformed like one missing the field (N2). Turn it on while a stream still holds
	// entries from before the upgrade.
	AllowEmptyFields bool `yaml:"allow_empty_fields"`
	// DefaultTenant is the tenant of seed 001 entries that carry none (E1 has no tenant
	// field; C1 requires one). Without it such an entry is malformed. Unused for R2.
	DefaultTenant string `yaml:"default_tenant"`
	// Transport labels metrics (default: the transport's name, "redisstream" or
	// "kdbstream").
	Transport string `yaml:"-"`

	// Idempotency, when set, skips events already processed by this group (R5) and
	// records each event after its handler succeeded.
	Idempotency hub.IdempotencyStore `yaml:"-"`
	// Versions, when set, sends events of an unknown MAJOR version to the DLQ (E5).
	Versions VersionChecker `yaml:"-"`
	// Logger receives the R8 records (default slog.Default()).
	Logger *slog.Logger `yaml:"-"`
	// Metrics receives the R8 counters (default: unregistered collectors).
	Metrics *hub.StreamMetrics `yaml:"-"`
}

// ConfigError is one invalid field of a ConsumerConfig. Validate joins one per
// problem, and a config checker reads Field (the Go field name, "ClaimMinIdle") to
// place each at its key.
type ConfigError struct {
	Field string // the ConsumerConfig field
	Msg   string // what is wrong with it
}

func (e *ConfigError) Error() string { return "streams: ConsumerConfig." + e.Field + " " + e.Msg }

// Validate reports every invalid field, one *ConfigError each, joined with errors.Join.
func (c *ConsumerConfig) Validate() error {
	var errs []error
	for _, f := range []struct {
		field   string
		invalid bool
		msg     string
	}{
		{"Stream", c.Stream == "", "is required"},
		{"Group", c.Group == "", "is required"},
		{"Consumer", c.Consumer == "", "is required"},
		{"Count", c.Count < 0, fmt.Sprintf("must be positive, got %d", c.Count)},
		{"Block", c.Block < 0, fmt.Sprintf("must not be negative, got %s", c.Block)},
		{"ClaimMinIdle", c.ClaimMinIdle < 0, fmt.Sprintf("must not be negative, got %s", c.ClaimMinIdle)},
		{"ClaimInterval", c.ClaimInterval < 0, fmt.Sprintf("must not be negative, got %s", c.ClaimInterval)},
		{"MaxDeliveries", c.MaxDeliveries < 0, fmt.Sprintf("must be positive, got %d", c.MaxDeliveries)},
		{"Concurrency", c.Concurrency < 0, fmt.Sprintf("must be positive, got %d", c.Concurrency)},
		{"DrainTimeout", c.DrainTimeout < 0, fmt.Sprintf("must not be negative, got %s", c.DrainTimeout)},
		{"IdempotencyTTL", c.IdempotencyTTL < 0, fmt.Sprintf("must not be negative, got %s", c.IdempotencyTTL)},
		{"Encoding", ValidateEncoding(c.Encoding) != nil, fmt.Sprintf("must be %q or %q, got %q", EncodingR2, EncodingSeed001, c.Encoding)},
		{"DLQStream", c.Stream != "" && c.DLQStream == c.Stream, fmt.Sprintf("must differ from Stream %q", c.Stream)},
	} {
		if f.invalid {
			errs = append(errs, &ConfigError{Field: f.field, Msg: f.msg})
		}
	}
	return errors.Join(errs...)
}
