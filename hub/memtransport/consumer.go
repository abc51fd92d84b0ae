package memtransport

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/koder/eventhub/hub"
)

// Consumer defaults.
const (
	DefaultMaxDeliveries   = 5
	DefaultRedeliveryDelay = 50 * time.Millisecond
	DefaultDrainTimeout    = 5 * time.Second
)

// ConsumerConfig configures a Consumer.
type ConsumerConfig struct {
	// Stream is the stream to read. Required.
	Stream string `yaml:"stream"`
	// Group is the consumer group. Consumers of one group share the stream's events (each
	// event goes to one of them); each group gets every event. A new group starts at the
	// beginning of the stream (the Broker keeps everything). Default: the stream name.
	Group string `yaml:"group"`
	// MaxDeliveries is how often an event is handed to the handler before it moves to the
	// dead-letter stream `<stream>:dlq`. Default 5; negative means never dead-letter.
	MaxDeliveries int `yaml:"max_deliveries"`
	// RedeliveryDelay is how long a failed event waits before it is due again. Default 50ms.
	RedeliveryDelay time.Duration `yaml:"redelivery_delay"`
	// DrainTimeout bounds how long Close waits for the running handler. Default 5s.
	DrainTimeout time.Duration `yaml:"drain_timeout"`
	// TracerProvider receives the handler spans; nil means the otel global provider.
	TracerProvider trace.TracerProvider `yaml:"-"`
}

func (c *ConsumerConfig) setDefaults() {
	if c.Group == "" {
		c.Group = c.Stream
	}
	if c.MaxDeliveries == 0 {
		c.MaxDeliveries = DefaultMaxDeliveries
	}
	if c.RedeliveryDelay == 0 {
		c.RedeliveryDelay = DefaultRedeliveryDelay
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
}

// Validate reports the first invalid field.
func (c *ConsumerConfig) Validate() error {
	switch {
	case c.Stream == "":
		return hub.Errorf(hub.InvalidArgument, "memtransport: ConsumerConfig.Stream is required")
	case c.RedeliveryDelay < 0:
		return hub.Errorf(hub.InvalidArgument, "memtransport: ConsumerConfig.RedeliveryDelay must not be negative")
	case c.DrainTimeout < 0:
		return hub.Errorf(hub.InvalidArgument, "memtransport: ConsumerConfig.DrainTimeout must not be negative")
	}
	return nil
}

// Consumer reads one stream as a member of a group and runs a handler for each event,
// one at a time, so a single consumer sees the stream in order. A handler error leaves
// the event pending; it is delivered again after RedeliveryDelay (to this or another
// member of the group), until MaxDeliveries moves it to the dead-letter stream.
type Consumer struct {
	broker *Broker
	cfg    ConsumerConfig

	mu      sync.Mutex
	started bool
	closed  bool
	cancel  context.CancelFunc // stops fetching
	abort   context.CancelFunc // cancels the running handler (drain timeout)
	done    chan struct{}
}

// NewConsumer returns a Consumer on b; it starts reading at Start.
func NewConsumer(b *Broker, cfg ConsumerConfig) (*Consumer, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "memtransport: nil Broker")
	}
	return &Consumer{broker: b, cfg: cfg}, nil
}

// Start runs h for each event in the background until ctx ends or Close. Handlers get a
// context prepared by hub.TracedHandler (publisher's span as parent, tenant, correlation
// id). Starting twice or after Close is a FailedPrecondition error.
func (c *Consumer) Start(ctx context.Context, h hub.Handler) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.started {
		return hub.Errorf(hub.FailedPrecondition, "memtransport: consumer already started or closed")
	}
	c.started = true
	fetchCtx, cancel := context.WithCancel(ctx)
	handlerCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel, c.abort, c.done = cancel, abort, make(chan struct{})
	h = hub.TracedHandler(c.cfg.Stream, h, c.cfg.TracerProvider)
	go c.run(fetchCtx, handlerCtx, h)
	return nil
}

func (c *Consumer) run(fetchCtx, handlerCtx context.Context, h hub.Handler) {
	defer close(c.done)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for fetchCtx.Err() == nil {
		off, ev, _, changed, wait, ok := c.broker.claim(c.cfg.Stream, c.cfg.Group, time.Now())
		if !ok {
			return
		}
		if ev == nil {
			var due <-chan time.Time
			if wait > 0 {
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				due = timer.C
			}
			select {
			case <-fetchCtx.Done():
			case <-changed:
			case <-due:
			}
			continue
		}
		err := h(handlerCtx, ev)
		if handlerCtx.Err() != nil {
			// Aborted by a drain timeout: not a handler failure, the event stays pending.
			c.broker.release(c.cfg.Stream, c.cfg.Group, off)
			return
		}
		c.broker.settle(c.cfg.Stream, c.cfg.Group, off, err, c.cfg.RedeliveryDelay, c.cfg.MaxDeliveries)
	}
}

// Close stops fetching and waits up to DrainTimeout for the running handler; a handler
// still running then is cancelled, its event stays pending, and Close returns a
// DeadlineExceeded error. Idempotent, safe before Start.
func (c *Consumer) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	started := c.started
	c.mu.Unlock()
	if !started {
		return nil
	}
	c.cancel()
	t := time.NewTimer(c.cfg.DrainTimeout)
	defer t.Stop()
	select {
	case <-c.done:
		c.abort()
		return nil
	case <-t.C:
		// The handler's context is cancelled; its event is released for redelivery when
		// the handler returns. Close does not wait for a handler that ignores ctx.
		c.abort()
		return hub.Errorf(hub.DeadlineExceeded, "memtransport: consumer of %q: handler still running after %s", c.cfg.Stream, c.cfg.DrainTimeout)
	}
}

var _ hub.Consumer = (*Consumer)(nil)
