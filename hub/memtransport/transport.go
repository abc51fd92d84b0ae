package memtransport

import (
	"context"
	"sync/atomic"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// DefaultName labels a Transport in metrics, logs and failure events when Config.Name
// is empty.
const DefaultName = "memory"

// Config configures a Transport.
type Config struct {
	// Stream is the stream Send appends to. Required.
	Stream string `yaml:"stream"`
	// Name labels the transport in metrics, logs and failure events. Default "memory".
	Name string `yaml:"name"`
	// MaxLen caps the stream at about its newest MaxLen events, like XADD MAXLEN ~:
	// older ones are trimmed, acknowledged or not. 0 keeps everything.
	MaxLen int `yaml:"max_len"`
}

func (c *Config) setDefaults() {
	if c.Name == "" {
		c.Name = DefaultName
	}
}

// Validate reports the first invalid field.
func (c *Config) Validate() error {
	if c.Stream == "" {
		return hub.Errorf(hub.InvalidArgument, "memtransport: Config.Stream is required")
	}
	if c.MaxLen < 0 {
		return hub.Errorf(hub.InvalidArgument, "memtransport: Config.MaxLen must not be negative")
	}
	return nil
}

// Transport appends events to one stream of a Broker. A Send stores the whole batch
// atomically; it never blocks on consumers. Safe for concurrent use.
type Transport struct {
	broker *Broker
	cfg    Config
	closed atomic.Bool
}

// New returns a Transport on b. It does not own b: Close leaves the broker open.
func New(b *Broker, cfg Config) (*Transport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "memtransport: nil Broker")
	}
	return &Transport{broker: b, cfg: cfg}, nil
}

// Send appends clones of batch to the stream. A cancelled ctx fails with Canceled (the
// context's error), a closed Transport with FailedPrecondition, a closed Broker with
// Unavailable.
func (t *Transport) Send(ctx context.Context, batch []*cloudevent.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.closed.Load() {
		return hub.Errorf(hub.FailedPrecondition, "memtransport: send on closed transport %q", t.cfg.Name)
	}
	if len(batch) == 0 {
		return nil
	}
	if !t.broker.append(t.cfg.Stream, batch, t.cfg.MaxLen) {
		return hub.Errorf(hub.Unavailable, "memtransport: broker of %q is closed", t.cfg.Name)
	}
	return nil
}

// Close marks the transport closed. Idempotent.
func (t *Transport) Close() error {
	t.closed.Store(true)
	return nil
}

// Name returns Config.Name.
func (t *Transport) Name() string { return t.cfg.Name }

// Health reports Unavailable once the broker is closed.
func (t *Transport) Health(ctx context.Context) error {
	t.broker.mu.Lock()
	closed := t.broker.closed
	t.broker.mu.Unlock()
	if closed {
		return hub.Errorf(hub.Unavailable, "memtransport: broker closed")
	}
	return ctx.Err()
}

var (
	_ hub.Transport     = (*Transport)(nil)
	_ hub.Named         = (*Transport)(nil)
	_ hub.HealthChecker = (*Transport)(nil)
)
