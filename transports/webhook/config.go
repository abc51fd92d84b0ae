package webhook

import (
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/secrets"
)

// Defaults for Config. Each names its unit; see the field docs for the trade-offs.
const (
	DefaultQueue   = "webhook"
	DefaultWorkers = 100
	// DefaultFirstAttemptBacklogBytes holds a burst of ~110 000 deliveries of a
	// 200-byte event (about 580 bytes encoded each) in memory for their first attempt,
	// about 300 MiB of RSS.
	DefaultFirstAttemptBacklogBytes = 64 << 20
	DefaultJitter                   = 0.2
	DefaultAttemptTimeout           = 15 * time.Second
	DefaultMaxRetryAfter            = 2 * time.Hour
	DefaultResponseExcerpt          = 1024
	DefaultRotationGrace            = 24 * time.Hour
	MaxRotationGrace                = 7 * 24 * time.Hour
	DefaultBreakerThreshold         = 5
	DefaultBreakerPause             = time.Minute
	DefaultCacheTTL                 = time.Second
	DefaultMaxConnsPerHost          = 64
	DefaultMode                     = ModeStructured
	DefaultUserAgent                = "eventhub-webhook/1"
	maxSecretsPerEndpoint           = 10
	breakerSnoozeJitterFraction     = 0.1
)

// Mode selects the CloudEvents HTTP binding mode of a request.
type Mode string

const (
	// ModeStructured sends the whole event as an application/cloudevents+json body:
	// one self-describing document, what most receivers log and replay.
	ModeStructured Mode = "structured"
	// ModeBinary sends the data as the body and the attributes as ce-* headers: the
	// receiver's handler gets its payload unwrapped.
	ModeBinary Mode = "binary"
)

// Config configures a Transport. New applies the defaults, then Validate.
type Config struct {
	// Name labels metrics and logs. Default "webhook".
	Name string `yaml:"name"`

	// Queue is the ledger queue of deliveries. Default DefaultQueue.
	Queue string `yaml:"queue"`
	// Workers is the size of each delivery pool of this process: River's queue and the
	// first attempts' own pool (inline.go), so up to 2*Workers attempts at once.
	// Default 100.
	Workers int `yaml:"workers"`
	// NoWork registers no queue: this process fans out (Send) and manages endpoints,
	// other processes deliver. Default false.
	NoWork bool `yaml:"no_work"`
	// QueueFirstAttempt sends every attempt through the ledger's queue. By default a
	// process that works deliveries makes the first attempt of the ones it inserts
	// itself, right after their transaction commits, without the queue's fetch
	// (inline.go; docs/webhook.md). Default false.
	QueueFirstAttempt bool `yaml:"queue_first_attempt"`
	// FirstAttemptBacklogBytes bounds the deliveries held in memory waiting for a
	// first-attempt slot, by their encoded size (the request body, base64, and its
	// headers): above it, new deliveries are queued for River's workers, whose fetch
	// takes only what they can run, until the backlog drains. A burst of small events
	// stays under the default; large events fanned out to many endpoints meet it before
	// they exhaust the process's memory (a held delivery costs about 4-5x its encoded
	// size in RSS). Default DefaultFirstAttemptBacklogBytes; negative: no bound.
	FirstAttemptBacklogBytes int64 `yaml:"first_attempt_backlog_bytes"`

	// RetrySchedule is the wait before each retry (H3); a delivery gets
	// len(RetrySchedule)+1 attempts, then it is dead. Default DefaultRetrySchedule.
	RetrySchedule []time.Duration `yaml:"retry_schedule"`
	// Jitter spreads each wait uniformly by ±Jitter of it. Default 0.2; negative = none.
	Jitter float64 `yaml:"jitter"`
	// MaxRetryAfter caps a receiver's Retry-After (honoured on 429 and 503 when longer
	// than the scheduled wait). Default 2 h.
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
	// AttemptTimeout bounds one request, connect to last response byte. Default 15 s
	// (Standard Webhooks recommends 15-30 s). The delivery job may run AttemptTimeout
	// plus a margin (AttemptTimeout, 1-10 s), which must stay below the ledger's
	// RescueStuckJobsAfter (New checks).
	AttemptTimeout time.Duration `yaml:"attempt_timeout"`
	// ResponseExcerpt is how many bytes of a failed response body are kept with the
	// delivery. Default 1024.
	ResponseExcerpt int `yaml:"response_excerpt"`

	// Mode is the CloudEvents HTTP binding mode. Default structured.
	Mode Mode `yaml:"mode"`
	// StandardWebhooks also sends webhook-timestamp and webhook-signature (the Standard
	// Webhooks scheme) so receivers can use that ecosystem's verifiers. Default false.
	StandardWebhooks bool `yaml:"standard_webhooks"`
	// UserAgent of requests. Default DefaultUserAgent.
	UserAgent string `yaml:"user_agent"`
	// RotationGrace is how long RotateSecret keeps the old secret signing (both
	// signatures are sent meanwhile). Default 24 h, at most 7 days.
	RotationGrace time.Duration `yaml:"rotation_grace"`

	// BreakerThreshold is how many consecutive failed attempts open an endpoint's
	// breaker. Default 5 (gobreaker's ConsecutiveFailures > 5 is one more).
	BreakerThreshold int `yaml:"breaker_threshold"`
	// BreakerPause is how long an open breaker defers deliveries before one probe is
	// let through (half-open). Default 1 min.
	BreakerPause time.Duration `yaml:"breaker_pause"`

	// CacheTTL is how long a worker reuses an endpoint's row and a closed breaker's
	// state before reading them again. Changes made through this process are seen at
	// once; changes by other replicas within CacheTTL. 0 = default 1 s; negative = read
	// every time.
	CacheTTL time.Duration `yaml:"cache_ttl"`
	// MaxConnsPerHost bounds the connections to one receiver host, open and idle (so the
	// requests in flight to it: more wait for a connection). Default 64.
	MaxConnsPerHost int `yaml:"max_conns_per_host"`

	// MaxEndpointsPerEvent caps how many endpoints of its tenant one event may fan
	// out to; an event over it is refused whole (fanout.go). Default 0 = no cap.
	MaxEndpointsPerEvent int `yaml:"max_endpoints_per_event"`
	// MaxQueuedPerEndpoint caps the deliveries waiting for one endpoint (an
	// endpoint's Controls.MaxQueued overrides it); fan-out past it fails with
	// ResourceExhausted (fanout.go). Default 0 = no cap.
	MaxQueuedPerEndpoint int `yaml:"max_queued_per_endpoint"`
	// MaxInFlightPerEndpoint caps the requests this process has open to one endpoint
	// at once (an endpoint's Controls.MaxInFlight overrides it), so that one slow
	// receiver holds at most that many of the Workers and the other endpoints'
	// deliveries keep flowing (inflight.go). Default 0 = no cap but the pools' sizes.
	MaxInFlightPerEndpoint int `yaml:"max_in_flight_per_endpoint"`
	// DeliveredRetention is how long a delivered delivery stays in the ledger: listed
	// (the console's and the admin API's delivery history) and unique per (endpoint,
	// event), H1 (an event that reaches the transport again after it gets a new
	// delivery; the ingress's dedupe window refuses re-sent events for its own TTL).
	// Shorter keeps the ledger's hot table small under a sustained load (on SQLite the
	// throughput declines as it grows). Dead deliveries keep the ledger's
	// discarded_retention, for resend. Default 0: the ledger's completed_retention (1h);
	// at least 1s and at most that.
	DeliveredRetention time.Duration `yaml:"delivered_retention"`

	// Proxy sends every delivery through this HTTP CONNECT proxy
	// (http://[user:pass@]host:port), e.g. one with a static egress IP; an endpoint's
	// Controls.Proxy overrides it. The SSRF rules still apply before the CONNECT
	// (proxy.go). Default none.
	Proxy string `yaml:"proxy"`

	// Allow exempts destinations from the SSRF rules (H4): CIDRs ("10.1.0.0/16"), IPs,
	// host names or "*.domain". For private deployments and tests; every entry is an
	// explicit hole, so keep it short. Default none.
	Allow []string `yaml:"allow"`
	// Resolver resolves receiver hosts. Default net.DefaultResolver. Tests inject one.
	Resolver Resolver `yaml:"-"`

	// Keyring encrypts the endpoints' signing secrets in the ledger's database
	// (AES-256-GCM, bound to the endpoint id; see secrets_at_rest.go). Default none:
	// secrets are stored as given, and rows encrypted earlier cannot be read.
	Keyring *secrets.Keyring `yaml:"-"`

	// Registerer receives the transport's metrics. Default none (not exported).
	Registerer prometheus.Registerer `yaml:"-"`
	// Logger receives delivery logs. Default slog.Default().
	Logger *slog.Logger `yaml:"-"`
}

func (c *Config) setDefaults() {
	if c.Name == "" {
		c.Name = "webhook"
	}
	if c.Queue == "" {
		c.Queue = DefaultQueue
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.FirstAttemptBacklogBytes == 0 {
		c.FirstAttemptBacklogBytes = DefaultFirstAttemptBacklogBytes
	}
	if c.RetrySchedule == nil {
		c.RetrySchedule = DefaultRetrySchedule
	}
	if c.Jitter == 0 {
		c.Jitter = DefaultJitter
	}
	if c.MaxRetryAfter == 0 {
		c.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if c.AttemptTimeout == 0 {
		c.AttemptTimeout = DefaultAttemptTimeout
	}
	if c.ResponseExcerpt == 0 {
		c.ResponseExcerpt = DefaultResponseExcerpt
	}
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.RotationGrace == 0 {
		c.RotationGrace = DefaultRotationGrace
	}
	if c.BreakerThreshold == 0 {
		c.BreakerThreshold = DefaultBreakerThreshold
	}
	if c.BreakerPause == 0 {
		c.BreakerPause = DefaultBreakerPause
	}
	if c.CacheTTL == 0 {
		c.CacheTTL = DefaultCacheTTL
	}
	if c.MaxConnsPerHost == 0 {
		c.MaxConnsPerHost = DefaultMaxConnsPerHost
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// WithDefaults returns the configuration New would use: c with every unset field
// given its default, on a copy, without touching the ledger or the network. Tools
// that check a configuration before running (hub lint) validate this, so they never
// carry a copy of the defaults that could drift from the library's.
func (c Config) WithDefaults() Config {
	c.setDefaults()
	return c
}

// Validate reports the first invalid field by name.
func (c *Config) Validate() error {
	switch {
	case c.Workers < 1:
		return fmt.Errorf("webhook: Workers %d: at least 1", c.Workers)
	case len(c.RetrySchedule) == 0:
		return fmt.Errorf("webhook: RetrySchedule: at least one wait")
	case c.Jitter >= 1:
		return fmt.Errorf("webhook: Jitter %g: below 1", c.Jitter)
	case c.MaxRetryAfter < 0:
		return fmt.Errorf("webhook: MaxRetryAfter %s: must not be negative", c.MaxRetryAfter)
	case c.AttemptTimeout <= 0:
		return fmt.Errorf("webhook: AttemptTimeout %s: must be positive", c.AttemptTimeout)
	case c.ResponseExcerpt < 0:
		return fmt.Errorf("webhook: ResponseExcerpt %d: must not be negative", c.ResponseExcerpt)
	case c.Mode != ModeStructured && c.Mode != ModeBinary:
		return fmt.Errorf("webhook: Mode %q: structured or binary", c.Mode)
	case c.RotationGrace < 0 || c.RotationGrace > MaxRotationGrace:
		return fmt.Errorf("webhook: RotationGrace %s: between 0 and %s", c.RotationGrace, MaxRotationGrace)
	case c.BreakerThreshold < 1:
		return fmt.Errorf("webhook: BreakerThreshold %d: at least 1", c.BreakerThreshold)
	case c.BreakerPause <= 0:
		return fmt.Errorf("webhook: BreakerPause %s: must be positive", c.BreakerPause)
	case c.MaxConnsPerHost < 1:
		return fmt.Errorf("webhook: MaxConnsPerHost %d: at least 1", c.MaxConnsPerHost)
	case c.MaxEndpointsPerEvent < 0:
		return fmt.Errorf("webhook: MaxEndpointsPerEvent %d: must not be negative", c.MaxEndpointsPerEvent)
	case c.MaxQueuedPerEndpoint < 0:
		return fmt.Errorf("webhook: MaxQueuedPerEndpoint %d: must not be negative", c.MaxQueuedPerEndpoint)
	case c.DeliveredRetention != 0 && c.DeliveredRetention < time.Second:
		return fmt.Errorf("webhook: DeliveredRetention %s: 0 (the ledger's completed_retention) or at least 1s", c.DeliveredRetention)
	case c.MaxInFlightPerEndpoint < 0 || c.MaxInFlightPerEndpoint > MaxInFlight:
		return fmt.Errorf("webhook: MaxInFlightPerEndpoint %d: between 0 (no cap) and %d", c.MaxInFlightPerEndpoint, MaxInFlight)
	}
	for i, d := range c.RetrySchedule {
		if d <= 0 {
			return fmt.Errorf("webhook: RetrySchedule[%d] %s: must be positive", i, d)
		}
	}
	if _, err := newGuard(c.Allow, nil); err != nil {
		return err
	}
	if c.Proxy != "" {
		if _, err := checkProxyURL(c.Proxy); err != nil {
			return fmt.Errorf("webhook: Proxy: %w", err)
		}
	}
	return nil
}

// proxyURL is Proxy parsed (Validate has checked it); nil for none.
func (c *Config) proxyURL() *url.URL {
	if c.Proxy == "" {
		return nil
	}
	u, _ := checkProxyURL(c.Proxy)
	return u
}
