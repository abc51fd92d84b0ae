package rabbitmq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Consumer reads one consumer group's durable queue (B1, E6, E7). Each event is acked
// only after its handler returns nil. A failed event waits Config.RetryDelay in the
// retry queue (see topology.go) and is redelivered, up to Config.MaxRetries times, then
// goes to the dead-letter queue with the reason in its headers; malformed events and
// unknown MAJOR versions go there at once. After a connection loss it reconnects,
// re-declares the topology and resumes; unacked events are redelivered by the broker.
type Consumer struct {
	cfg  Config
	conn *connection
	log  *slog.Logger
	tag  string

	patterns []hub.Pattern

	received, acked, failed prometheus.Counter // R8 children, resolved once
	lag                     prometheus.Observer

	mu      sync.Mutex
	started bool
	closed  bool
	stop    chan struct{} // closed by Close: stop fetching
	loop    chan struct{} // closed when the session loop (and every worker) exits

	handlerCtx    context.Context // cancelled when the drain timeout passes
	cancelHandler context.CancelFunc
}

// NewConsumer validates cfg (Queue required), connects and declares the exchange, the
// group's queue, retry queue and DLQ, and the bindings.
func NewConsumer(ctx context.Context, cfg Config) (*Consumer, error) {
	defaulted := cfg.QueueType == ""
	cfg.setDefaults()
	if err := cfg.validateConsumer(); err != nil {
		return nil, err
	}
	c := &Consumer{cfg: cfg, stop: make(chan struct{}), loop: make(chan struct{})}
	for _, p := range cfg.Patterns {
		c.patterns = append(c.patterns, hub.MustCompilePattern(p)) // checked by Validate
	}
	ec := cfg.Metrics.EventCount
	c.received = ec.WithLabelValues(transportLabel, cfg.Queue, "received")
	c.acked = ec.WithLabelValues(transportLabel, cfg.Queue, "acked")
	c.failed = ec.WithLabelValues(transportLabel, cfg.Queue, "failed")
	c.lag = cfg.Metrics.Lag.WithLabelValues(transportLabel, cfg.Exchange, cfg.Queue)
	c.tag = cfg.ConsumerName + "-" + randomSuffix()
	c.log = cfg.Logger.With("transport", transportLabel)
	c.handlerCtx, c.cancelHandler = context.WithCancel(context.Background())
	conn, err := dialConnection(ctx, &c.cfg, "consumer", func(conn *amqp.Connection) error {
		ch, err := conn.Channel()
		if err != nil {
			return err
		}
		defer ch.Close()
		if err := settleQueueType(conn, &c.cfg, &defaulted); err != nil {
			return err
		}
		return declareConsumer(ch, &c.cfg)
	})
	if err != nil {
		c.cancelHandler()
		return nil, err
	}
	c.conn = conn
	return c, nil
}

// Start consumes in the background until Close or until ctx ends.
func (c *Consumer) Start(ctx context.Context, h hub.Handler) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return hub.Errorf(hub.FailedPrecondition, "rabbitmq: Start after Close")
	case c.started:
		return hub.Errorf(hub.FailedPrecondition, "rabbitmq: consumer already started")
	case h == nil:
		return hub.Errorf(hub.InvalidArgument, "rabbitmq: nil handler")
	}
	c.started = true
	go c.run(h)
	go func() {
		select {
		case <-ctx.Done():
			_ = c.Close()
		case <-c.stop:
		}
	}()
	return nil
}

// run keeps one consuming session alive across connection losses.
func (c *Consumer) run(h hub.Handler) {
	defer close(c.loop)
	stopCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-c.stop
		cancel()
	}()
	for {
		conn, _, err := c.conn.wait(stopCtx)
		if err != nil {
			return
		}
		err = c.session(conn, h)
		select {
		case <-c.stop:
			return
		default:
		}
		c.log.Warn("rabbitmq_consumer_interrupted", "queue", c.cfg.Queue, "error", fmt.Sprint(err))
		// A channel-level failure leaves the connection up: pause before retrying.
		select {
		case <-c.stop:
			return
		case <-time.After(c.cfg.ReconnectMin):
		}
	}
}

// session consumes on one connection until the channel closes or Close is called.
func (c *Consumer) session(conn *amqp.Connection, h hub.Handler) error {
	ch, err := conn.Channel()
	if err != nil {
		return wrap(err)
	}
	defer ch.Close()
	// Declared again per session, not only per connection: an operator may have
	// deleted the queue (the broker then cancels the consumer and we land here).
	if err := declareConsumer(ch, &c.cfg); err != nil {
		return wrap(err)
	}
	if err := ch.Qos(c.cfg.Prefetch, 0, false); err != nil {
		return wrap(err)
	}
	dlq, err := openConfirmChannel(conn, 0, true, 16)
	if err != nil {
		return err
	}
	defer dlq.close()
	deliveries, err := ch.Consume(c.cfg.Queue, c.tag, false, false, false, false, nil)
	if err != nil {
		return wrap(err)
	}
	var wg sync.WaitGroup
	for range c.cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-c.stop:
					return // prefetched deliveries stay unacked and are requeued on close
				case d, ok := <-deliveries:
					if !ok {
						return
					}
					c.process(&d, h, dlq)
				}
			}
		}()
	}
	wg.Wait()
	return amqp.ErrClosed
}

// process runs one delivery through decode, the version gate and the handler, and
// settles it: ack, nack into the retry queue, or dead-letter.
func (c *Consumer) process(d *amqp.Delivery, h hub.Handler, dlq *confirmChannel) {
	ev, err := decode(d)
	if err == nil {
		err = validate(ev)
	}
	if err != nil {
		c.deadLetter(d, dlq, nil, reasonMalformed, err)
		return
	}
	if !c.wanted(ev.Type) {
		_ = d.Ack(false)
		return
	}
	if c.cfg.Versions != nil {
		if verr := c.cfg.Versions.CheckVersion(ev); verr != nil {
			c.deadLetter(d, dlq, ev, reasonUnknownVersion, verr)
			return
		}
	}
	retries := retryCount(d.Headers, c.cfg.Queue)
	c.received.Inc()
	if at := publishedAt(d); !at.IsZero() {
		c.lag.Observe(time.Since(at).Seconds())
	}
	// E4: the handler's context carries the publisher's span, tenant and correlation id.
	ctx := hub.ContextWithEvent(c.handlerCtx, ev)
	c.log.LogAttrs(ctx, slog.LevelInfo, "event_received", slog.String("type", ev.Type), slog.String("event_id", ev.ID),
		slog.String("group", c.cfg.Queue), slog.String("consumer", c.tag))
	start := time.Now()
	herr := safeHandle(ctx, h, ev)
	if herr == nil {
		if err := d.Ack(false); err != nil {
			c.log.Warn("rabbitmq_ack_failed", "event_id", ev.ID, "error", err.Error())
			return
		}
		c.acked.Inc()
		c.log.LogAttrs(ctx, slog.LevelInfo, "event_acked", slog.String("type", ev.Type), slog.String("event_id", ev.ID),
			slog.Int64("elapsed_ms", time.Since(start).Milliseconds()))
		return
	}
	if ctx.Err() != nil {
		// Close gave up waiting and cancelled the handler: that is shutdown, not a
		// failure. Left unacked, the broker requeues it when the channel closes.
		return
	}
	c.failed.Inc()
	c.log.LogAttrs(ctx, slog.LevelInfo, "event_failed", slog.String("type", ev.Type), slog.String("event_id", ev.ID),
		slog.String("error", herr.Error()), slog.Int("retry_count", retries))
	if c.cfg.MaxRetries < 0 || retries >= c.cfg.MaxRetries {
		c.deadLetter(d, dlq, ev, reasonMaxDeliveries, herr)
		return
	}
	// Without requeue the broker dead-letters it into the retry queue (delayed retry).
	if err := d.Nack(false, false); err != nil {
		c.log.Warn("rabbitmq_nack_failed", "event_id", ev.ID, "error", err.Error())
	}
}

// safeHandle turns a handler panic into a failure, so one bad event cannot stop the
// consumer; it is then retried and dead-lettered like any other failure.
func safeHandle(ctx context.Context, h hub.Handler, ev *cloudevent.Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errPanic, r)
		}
	}()
	return h(ctx, ev)
}

// Close stops fetching, waits for running handlers up to Config.DrainTimeout and closes
// the connection; deliveries not acked by then are requeued by the broker. Idempotent,
// safe before Start. It errors (DeadlineExceeded) when handlers outlived the timeout.
func (c *Consumer) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	started := c.started
	close(c.stop)
	c.mu.Unlock()
	var err error
	if started {
		select {
		case <-c.loop: // workers stopped fetching and every running handler returned
		case <-time.After(c.cfg.DrainTimeout):
			// Cancel the stragglers and close the connection under them: their events
			// were never acked, so the broker requeues them.
			c.cancelHandler()
			err = hub.Errorf(hub.DeadlineExceeded, "rabbitmq: handlers still running after drain timeout %s", c.cfg.DrainTimeout)
		}
	}
	c.conn.close()
	c.cancelHandler()
	return err
}

// wanted applies the hub's pattern semantics on top of the bindings: they agree except
// for the bare "*" (every type but hub.*), which is bound as "#" (see bindingKeys).
func (c *Consumer) wanted(typ string) bool {
	for _, p := range c.patterns {
		if p.Match(typ) {
			return true
		}
	}
	return false
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var errPanic = errors.New("handler panicked")

var (
	_ hub.Consumer      = (*Consumer)(nil)
	_ hub.HealthChecker = (*Consumer)(nil)
)

// Health reports whether the broker connection is up.
func (c *Consumer) Health(context.Context) error {
	_, _, err := c.conn.current()
	return err
}
