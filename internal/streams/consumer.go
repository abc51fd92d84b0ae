package streams

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// Consumer is the R4 consumer loop over a Backend. Four goroutines cooperate:
//
//   - the reader first re-reads this consumer's own pending entries ("0", crash
//     recovery), then reads new ones (">") in batches of Count;
//   - the claimer runs XAUTOCLAIM every ClaimInterval for entries idle at least
//     ClaimMinIdle (failed, or held by a dead consumer) and hands them over for a retry;
//   - the worker runs the handler on each entry of a batch, leaves failures pending,
//     and dead-letters what cannot succeed;
//   - the acker sends the successes' XACKs, one per batch or fewer, off the worker's
//     path.
//
// The reader hands batches over an unbuffered channel, so at most one batch waits
// while another is processed: the next read overlaps the handlers without the consumer
// holding many entries it has not started.
type Consumer struct {
	b   Backend
	cfg streams.ConsumerConfig

	mu       sync.Mutex
	started  bool
	closed   bool
	stopRead context.CancelFunc // ends the reader and the claimer
	stopWork context.CancelFunc // cancels handler contexts (drain timeout)
	readCtx  context.Context
	acks     chan []string // worker -> acker: ids of handled entries
	done     chan struct{} // closed when the acker has sent the last acks

	// The R8 collectors with this consumer's labels, resolved once.
	mReceived, mAcked, mFailed, mDuplicate prometheus.Counter
	mLag                                   prometheus.Observer

	inHand  sync.Map // entry id -> struct{}: read or claimed, not yet finished
	lastErr sync.Map // entry id -> string: the last handler error, for the DLQ record
}

// New checks cfg (after defaults) and returns a Consumer that does nothing until Start.
func New(b Backend, cfg streams.ConsumerConfig) (*Consumer, error) {
	if b == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "streams: nil Backend")
	}
	setDefaults(&cfg)
	if err := cfg.Validate(); err != nil {
		return nil, hub.Wrap(hub.InvalidArgument, err)
	}
	m, tr, s := cfg.Metrics, cfg.Transport, cfg.Stream
	return &Consumer{
		b: b, cfg: cfg, done: make(chan struct{}),
		mReceived:  m.EventCount.WithLabelValues(tr, s, "received"),
		mAcked:     m.EventCount.WithLabelValues(tr, s, "acked"),
		mFailed:    m.EventCount.WithLabelValues(tr, s, "failed"),
		mDuplicate: m.EventCount.WithLabelValues(tr, s, "duplicate"),
		mLag:       m.Lag.WithLabelValues(tr, s, cfg.Group),
	}, nil
}

// Config returns the effective configuration, defaults applied.
func (c *Consumer) Config() streams.ConsumerConfig { return c.cfg }

type batch struct {
	entries []Entry
	claimed bool
}

// Start creates the group (R4.1, MKSTREAM; an existing group is kept) and starts
// consuming in the background. It returns the group creation error, if any.
// Cancelling ctx stops reading, as Close does, without waiting; values of ctx (trace
// ids) reach the handlers, its cancellation does not: in-flight handlers are cancelled
// only when Close's drain timeout expires.
func (c *Consumer) Start(ctx context.Context, h hub.Handler) error {
	if h == nil {
		return hub.Errorf(hub.InvalidArgument, "streams: nil Handler")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return hub.Errorf(hub.FailedPrecondition, "streams: consumer %q is closed", c.cfg.Consumer)
	}
	if c.started {
		return hub.Errorf(hub.FailedPrecondition, "streams: consumer %q already started", c.cfg.Consumer)
	}
	if err := c.b.CreateGroup(ctx, c.cfg.Stream, c.cfg.Group, c.cfg.Start); err != nil {
		return err
	}
	c.started = true
	readCtx, stopRead := context.WithCancel(context.Background())
	stopAfter := context.AfterFunc(ctx, stopRead)
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	c.readCtx, c.stopRead, c.stopWork = readCtx, stopRead, stopWork

	batches := make(chan batch)
	var producers sync.WaitGroup
	producers.Add(2)
	go func() { defer producers.Done(); c.read(readCtx, batches) }()
	go func() { defer producers.Done(); c.claim(readCtx, batches) }()
	go func() { producers.Wait(); stopAfter(); close(batches) }()
	c.acks = make(chan []string, 4)
	go c.work(workCtx, batches, h)
	go c.ackLoop(workCtx)
	return nil
}

// Close stops reading and claiming, lets the batch in progress finish up to
// DrainTimeout, acks what succeeded and leaves the rest pending for redelivery: nothing
// is lost. It is idempotent and safe before Start. It returns a DeadlineExceeded error
// when handlers were still running at the drain timeout (they are then cancelled).
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
	c.stopRead()
	defer c.stopWork()
	timer := time.NewTimer(c.cfg.DrainTimeout)
	defer timer.Stop()
	select {
	case <-c.done:
		return nil
	case <-timer.C:
	}
	c.stopWork()
	grace := time.NewTimer(time.Second)
	defer grace.Stop()
	select {
	case <-c.done:
	case <-grace.C:
	}
	return hub.Errorf(hub.DeadlineExceeded, "streams: consumer %q: handlers still running after drain timeout %s; their entries stay pending", c.cfg.Consumer, c.cfg.DrainTimeout)
}

// Done is closed once the consumer has stopped (after Close or the Start context's
// cancellation) and its last acks were sent.
func (c *Consumer) Done() <-chan struct{} { return c.done }

// read is the reader goroutine: own pending entries first, then new ones.
func (c *Consumer) read(ctx context.Context, out chan<- batch) {
	cfg := c.cfg
	var backoff time.Duration
	id := "0" // crash recovery: re-read this consumer's own pending entries first
	for ctx.Err() == nil {
		block := cfg.Block
		if id != ">" {
			block = 0
		}
		entries, err := c.b.ReadGroup(ctx, cfg.Stream, cfg.Group, cfg.Consumer, id, cfg.Count, block)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, ErrNoGroup) {
				c.recreateGroup(ctx)
			}
			backoff = nextBackoff(backoff)
			cfg.Logger.Warn("stream read failed", "stream", cfg.Stream, "group", cfg.Group,
				"consumer", cfg.Consumer, "error", err, "retry_in", backoff)
			sleep(ctx, backoff)
			continue
		}
		backoff = 0
		if id != ">" {
			if len(entries) == 0 {
				id = ">"
				continue
			}
			id = entries[len(entries)-1].ID
		}
		if len(entries) == 0 {
			continue
		}
		for _, e := range entries {
			c.inHand.Store(e.ID, struct{}{})
		}
		select {
		case out <- batch{entries: entries}:
		case <-ctx.Done():
			return // read but not started: stays pending, re-read at the next start
		}
	}
}

// recreateGroup handles a group lost with its stream (a Redis restarted without
// persistence): from "0", since every entry of the re-created stream is new to us.
func (c *Consumer) recreateGroup(ctx context.Context) {
	cfg := c.cfg
	if err := c.b.CreateGroup(ctx, cfg.Stream, cfg.Group, "0"); err != nil {
		return
	}
	cfg.Logger.Warn("consumer group was missing and has been re-created from the start of the stream; "+
		"the server probably lost its data (no persistence?)", "stream", cfg.Stream, "group", cfg.Group)
}

func nextBackoff(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return 50 * time.Millisecond
	case d >= 2*time.Second:
		return 2 * time.Second
	}
	return 2 * d
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

var _ hub.Consumer = (*Consumer)(nil)
