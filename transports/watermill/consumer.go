package watermill

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// settleWait bounds how long Close waits, after the last handler returned, for the
// subscriber to pass that message's ack or nack to the broker. Watermill subscribers
// cancel a message's context once they have settled it; cancelling the subscription
// before that could drop the ack (the broker would redeliver the message).
const settleWait = time.Second

// Consumer reads a Watermill topic through a message.Subscriber (hub.Consumer).
//
// Each message is decoded (Decode, either content mode) and handed to the handler; nil
// acks it, an error nacks it (the subscriber's redelivery policy applies), and once it
// failed on its MaxDeliveries-th delivery it is published to the dead-letter topic and
// acked. A malformed message or an unknown MAJOR version goes to the dead-letter topic
// at once (N2, E5). Close stops taking messages, waits for running handlers up to
// DrainTimeout and cancels the subscription; unacked messages are the broker's to
// redeliver, so nothing is lost.
type Consumer struct {
	sub message.Subscriber
	cfg ConsumerConfig

	mu      sync.Mutex
	started bool
	closed  bool
	stop    chan struct{} // closed by Close: take no further message
	done    chan struct{} // closed when every worker returned

	subCtx        context.Context // the subscriptions' context, cancelled last
	cancelSub     context.CancelFunc
	handlerCtx    context.Context // cancelled when the drain timeout passes
	cancelHandler context.CancelFunc

	lastMu   sync.Mutex
	settling []*message.Message        // the last message of each worker, for Close
	chans    []<-chan *message.Message // the current subscription of each worker

	counts deliveryCounter

	received, acked, failed prometheus.Counter
	dlq                     *prometheus.CounterVec
}

// NewConsumer validates cfg and wraps sub; DeadLetter is required unless MaxDeliveries
// is NeverDeadLetter. It does no I/O: Start subscribes.
func NewConsumer(sub message.Subscriber, cfg ConsumerConfig) (*Consumer, error) {
	if sub == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "watermill: nil Subscriber")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.DeadLetter == nil && cfg.MaxDeliveries != NeverDeadLetter {
		return nil, hub.Errorf(hub.InvalidArgument, "watermill: ConsumerConfig.DeadLetter is required unless MaxDeliveries is NeverDeadLetter")
	}
	c := &Consumer{sub: sub, cfg: cfg, stop: make(chan struct{}), done: make(chan struct{})}
	c.subCtx, c.cancelSub = context.WithCancel(context.Background())
	c.handlerCtx, c.cancelHandler = context.WithCancel(context.Background())
	ec := cfg.Metrics.EventCount
	c.received = ec.WithLabelValues(cfg.Name, cfg.Topic, "received")
	c.acked = ec.WithLabelValues(cfg.Name, cfg.Topic, "acked")
	c.failed = ec.WithLabelValues(cfg.Name, cfg.Topic, "failed")
	c.dlq = cfg.Metrics.DLQ
	return c, nil
}

// Start subscribes (after SubscribeInitialize, when the subscriber offers it, so the
// topic exists) Concurrency times and returns once every subscription is established.
// Cancelling ctx stops the consumer as Close does; its values reach the handlers.
func (c *Consumer) Start(ctx context.Context, h hub.Handler) error {
	if h == nil {
		return hub.Errorf(hub.InvalidArgument, "watermill: nil Handler")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return hub.Errorf(hub.FailedPrecondition, "watermill: Start after Close")
	case c.started:
		return hub.Errorf(hub.FailedPrecondition, "watermill: consumer already started")
	}
	if init, ok := c.sub.(message.SubscribeInitializer); ok {
		if err := init.SubscribeInitialize(c.cfg.Topic); err != nil {
			return hub.Wrap(DefaultErrorCode(err), fmt.Errorf("watermill: SubscribeInitialize %q: %w", c.cfg.Topic, err))
		}
	}
	chans := make([]<-chan *message.Message, c.cfg.Concurrency)
	for i := range chans {
		ch, err := c.sub.Subscribe(c.subCtx, c.cfg.Topic)
		if err != nil {
			// A failed Start ends the consumer: the subscriptions made so far go with it.
			c.cancelSub()
			c.closed = true
			close(c.stop)
			return hub.Wrap(DefaultErrorCode(err), fmt.Errorf("watermill: Subscribe %q: %w", c.cfg.Topic, err))
		}
		chans[i] = ch
	}
	c.started = true
	c.handlerCtx, c.cancelHandler = context.WithCancel(context.WithoutCancel(ctx))
	handler := hub.TracedHandler(c.cfg.Topic, h, c.cfg.TracerProvider)
	c.settling = make([]*message.Message, len(chans))
	c.chans = chans
	var wg sync.WaitGroup
	for i, ch := range chans {
		wg.Add(1)
		go func() { defer wg.Done(); c.work(i, ch, handler) }()
	}
	go func() { wg.Wait(); close(c.done) }()
	go func() {
		select {
		case <-ctx.Done():
			_ = c.Close()
		case <-c.stop:
		}
	}()
	return nil
}

// work takes one subscription's messages one at a time. When the subscriber closes the
// channel while the consumer runs (a subscriber that gave up after a broker outage), it
// subscribes again with a backoff.
func (c *Consumer) work(slot int, ch <-chan *message.Message, h hub.Handler) {
	backoff := 50 * time.Millisecond
	for {
		select {
		case <-c.stop:
			return
		case msg, ok := <-ch:
			if ok {
				c.process(msg, h)
				c.lastMu.Lock()
				c.settling[slot] = msg
				c.lastMu.Unlock()
				backoff = 50 * time.Millisecond
				continue
			}
		}
		c.cfg.Logger.Warn("watermill subscription ended; subscribing again", "topic", c.cfg.Topic, "retry_in", backoff)
		select {
		case <-c.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
		if next, err := c.sub.Subscribe(c.subCtx, c.cfg.Topic); err == nil {
			ch = next
			c.lastMu.Lock()
			c.chans[slot] = ch
			c.lastMu.Unlock()
		} else {
			c.cfg.Logger.Warn("watermill subscribe failed", "topic", c.cfg.Topic, "error", err)
			ch = closedChan
		}
	}
}

var closedChan = func() <-chan *message.Message { c := make(chan *message.Message); close(c); return c }()

// process settles one message: ack, nack or dead-letter.
func (c *Consumer) process(msg *message.Message, h hub.Handler) {
	ev, err := Decode(msg)
	if err == nil && c.cfg.Versions != nil {
		if verr := c.cfg.Versions.CheckVersion(ev); verr != nil {
			c.deadLetter(msg, ev, ReasonUnknownVersion, verr, 0)
			return
		}
	}
	if err != nil {
		c.deadLetter(msg, nil, ReasonMalformed, err, 0)
		return
	}
	c.received.Inc()
	n := c.counts.delivered(msg)
	log := c.cfg.Logger
	if log.Enabled(c.handlerCtx, slog.LevelDebug) {
		log.Debug("event_received", "type", ev.Type, "event_id", ev.ID, "group", c.cfg.Group, "consumer", c.cfg.Name)
	}
	start := time.Now()
	herr := safeHandle(c.handlerCtx, h, ev)
	if herr == nil {
		msg.Ack()
		c.counts.forget(msg)
		c.acked.Inc()
		if log.Enabled(c.handlerCtx, slog.LevelDebug) {
			log.Debug("event_acked", "type", ev.Type, "event_id", ev.ID, "elapsed_ms", time.Since(start).Milliseconds())
		}
		return
	}
	if c.handlerCtx.Err() != nil {
		// Close gave up waiting: that is shutdown, not a failure of the event.
		msg.Nack()
		return
	}
	c.failed.Inc()
	log.Info("event_failed", "type", ev.Type, "event_id", ev.ID, "error", herr.Error(), "retry_count", n-1)
	if c.cfg.MaxDeliveries != NeverDeadLetter && n >= c.cfg.MaxDeliveries {
		c.deadLetter(msg, ev, ReasonMaxDeliveries, herr, n)
		return
	}
	msg.Nack()
}

// safeHandle turns a handler panic into a failure, so one bad event cannot stop the
// consumer.
func safeHandle(ctx context.Context, h hub.Handler, ev *cloudevent.Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("watermill: handler panicked: %v", r)
		}
	}()
	return h(ctx, ev)
}

// Close stops taking messages, waits up to DrainTimeout for running handlers (then
// cancels them and returns DeadlineExceeded), lets the subscriber settle the last acks,
// and cancels the subscriptions; with CloseSubscriber it closes the Subscriber and the
// DeadLetter publisher. Idempotent, safe before Start.
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
		case <-c.done:
		case <-time.After(c.cfg.DrainTimeout):
			c.cancelHandler()
			<-c.done
			err = hub.Errorf(hub.DeadlineExceeded, "watermill: handlers still running after drain timeout %s; their messages stay unacked", c.cfg.DrainTimeout)
		}
		c.awaitSettled()
		if c.cfg.Quiesce != nil {
			stopNacking := c.nackRemaining()
			c.cfg.Quiesce()
			c.cancelSub()
			stopNacking()
		}
	}
	c.cancelSub()
	c.cancelHandler()
	if c.cfg.CloseSubscriber {
		if cerr := c.sub.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if c.cfg.DeadLetter != nil {
			_ = c.cfg.DeadLetter.Close()
		}
	}
	return err
}

// nackRemaining nacks, until the returned func is called, every message the
// subscriptions still deliver: they were not processed and go back to the broker. The
// returned func waits (at most settleWait) for the subscriptions to end.
func (c *Consumer) nackRemaining() (stop func()) {
	c.lastMu.Lock()
	chans := c.chans
	c.lastMu.Unlock()
	var wg sync.WaitGroup
	quit := make(chan struct{})
	for _, ch := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case m, ok := <-ch:
					if !ok {
						return
					}
					m.Nack()
				case <-quit:
					return
				}
			}
		}()
	}
	return func() {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(settleWait):
		}
		close(quit)
	}
}

// awaitSettled waits, at most settleWait, until the subscriber cancelled the context of
// each worker's last message, its sign that the ack or nack went out.
func (c *Consumer) awaitSettled() {
	c.lastMu.Lock()
	last := c.settling
	c.lastMu.Unlock()
	deadline := time.NewTimer(settleWait)
	defer deadline.Stop()
	for _, m := range last {
		if m == nil {
			continue
		}
		select {
		case <-m.Context().Done():
		case <-deadline.C:
			return
		}
	}
}

// deliveryCounter counts deliveries per message UUID in this process, for subscribers
// that do not report the broker's count (MetaDeliveries). It forgets a message once it
// is acked or dead-lettered, and everything past maxCounted entries (messages that
// failed here and then went to another process), so it stays bounded.
type deliveryCounter struct {
	mu sync.Mutex
	n  map[string]int
}

const maxCounted = 100_000

func (d *deliveryCounter) delivered(msg *message.Message) int {
	if s := msg.Metadata.Get(MetaDeliveries); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == nil || len(d.n) >= maxCounted {
		d.n = make(map[string]int)
	}
	d.n[msg.UUID]++
	return d.n[msg.UUID]
}

func (d *deliveryCounter) forget(msg *message.Message) {
	d.mu.Lock()
	delete(d.n, msg.UUID)
	d.mu.Unlock()
}

var _ hub.Consumer = (*Consumer)(nil)
