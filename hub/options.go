package hub

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// Hub defaults.
const (
	// DefaultCloseTimeout bounds how long Close waits for queued direct deliveries.
	DefaultCloseTimeout = 30 * time.Second
	// DefaultSource is the CloudEvents source of the hub's own events (hub.*).
	DefaultSource = "/eventhub"
	// DefaultFailureSinkTimeout bounds one Send of a failure event to the sink.
	DefaultFailureSinkTimeout = 5 * time.Second
)

// Option configures a Hub (functional options are kept to New and Forward; transports
// take Config structs).
type Option func(*options)

type options struct {
	logger         *slog.Logger
	registerer     prometheus.Registerer
	validator      Validator
	outbox         Outbox
	failureSink    Transport
	tracerProvider trace.TracerProvider
	closeTimeout   time.Duration
	source         string
}

func (o *options) setDefaults() {
	if o.logger == nil {
		o.logger = slog.Default()
	}
	if o.closeTimeout == 0 {
		o.closeTimeout = DefaultCloseTimeout
	}
	if o.source == "" {
		o.source = DefaultSource
	}
}

func (o *options) validate() error {
	if o.closeTimeout < 0 {
		return Errorf(InvalidArgument, "hub: WithCloseTimeout must not be negative")
	}
	return nil
}

// WithLogger sets the logger of the R8 records (event_emitted, event_failed, event_dlq).
// Default slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithRegisterer registers the hub's Prometheus collectors on reg. Without it (or with
// nil) they are kept but not exported.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(o *options) { o.registerer = reg }
}

// WithValidator makes Publish validate every event with v after the CloudEvents checks;
// an invalid event fails Publish before anything is sent (V1). When v also implements
// VersionSource, Publish stamps dataversion on events that lack it.
func WithValidator(v Validator) Option { return func(o *options) { o.validator = v } }

// WithRegistry is WithValidator for a schema registry (schema.Builtin() and friends),
// which also supplies the latest version of each type for dataversion stamping.
func WithRegistry(r Registry) Option { return func(o *options) { o.validator = r } }

// WithOutbox installs the transactional outbox: routes in outbox mode enqueue there
// before Publish returns (O1), and PublishTx becomes available (O4).
func WithOutbox(ob Outbox) Option { return func(o *options) { o.outbox = ob } }

// WithFailureSink sends every hub.transport.failed event to t as well as to in-process
// subscribers, so failures are recorded outside the process (F1: `events.transport`).
// One attempt per event; a failing sink is logged, never retried (it would recurse).
func WithFailureSink(t Transport) Option { return func(o *options) { o.failureSink = t } }

// WithTracerProvider sets where the hub's spans go. Default: the otel global provider,
// a no-op unless the application installed one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracerProvider = tp }
}

// WithCloseTimeout bounds how long Close waits for queued and in-flight direct
// deliveries. Default 30s.
func WithCloseTimeout(d time.Duration) Option { return func(o *options) { o.closeTimeout = d } }

// WithSource sets the CloudEvents source of the hub's own events. Default "/eventhub".
func WithSource(s string) Option { return func(o *options) { o.source = s } }
