package streams

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// ioTimeout bounds the acks and dead-letter moves the worker sends, which must still go
// out while the consumer is closing.
const ioTimeout = 5 * time.Second

// work is the worker goroutine. With Concurrency 1 it runs each batch in order, one
// handler at a time (per-stream order, E6). Above 1 it starts each entry's handler as
// soon as one of Concurrency slots is free, across batch boundaries, and acks each
// batch once all of its handlers returned.
func (c *Consumer) work(ctx context.Context, batches <-chan batch, h hub.Handler) {
	defer close(c.acks)
	if c.cfg.Concurrency <= 1 {
		for b := range batches {
			acks := make([]string, 0, len(b.entries))
			for _, e := range b.entries {
				if c.readCtx.Err() != nil {
					break // closing: entries not started stay pending
				}
				if c.handle(ctx, e, h) {
					acks = append(acks, e.ID)
				}
			}
			c.finish(b, acks)
		}
		return
	}
	sem := make(chan struct{}, c.cfg.Concurrency)
	var batchesLeft sync.WaitGroup
	for b := range batches {
		var mu sync.Mutex
		var running sync.WaitGroup
		acks := make([]string, 0, len(b.entries))
		for _, e := range b.entries {
			select {
			case sem <- struct{}{}:
			case <-c.readCtx.Done():
			}
			if c.readCtx.Err() != nil {
				break
			}
			running.Add(1)
			go func() {
				defer func() { <-sem; running.Done() }()
				if c.handle(ctx, e, h) {
					mu.Lock()
					acks = append(acks, e.ID)
					mu.Unlock()
				}
			}()
		}
		batchesLeft.Add(1)
		go func() {
			defer batchesLeft.Done()
			running.Wait()
			c.finish(b, acks)
		}()
	}
	batchesLeft.Wait()
}

// finish hands a batch's successes to the acker and releases its entries. One XACK
// per batch (or several batches) instead of one per entry is safe: an entry acked late
// is at worst delivered again after a crash, which R4.3 already demands handlers
// tolerate.
func (c *Consumer) finish(b batch, acks []string) {
	if len(acks) > 0 {
		c.acks <- acks
	}
	for _, e := range b.entries {
		c.inHand.Delete(e.ID)
	}
}

// ackLoop is the acker goroutine: it sends the acks of finished batches, merging those
// that queued up meanwhile into one XACK, so the worker never waits for an ack round
// trip. It drains everything before the consumer reports Done.
func (c *Consumer) ackLoop(ctx context.Context) {
	defer close(c.done)
	var ids []string
	for first := range c.acks {
		ids = append(ids[:0], first...)
	more:
		for len(ids) < 10*c.cfg.Count {
			select {
			case next, ok := <-c.acks:
				if !ok {
					break more
				}
				ids = append(ids, next...)
			default:
				break more
			}
		}
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ioTimeout)
		if err := c.b.Ack(actx, c.cfg.Stream, c.cfg.Group, ids...); err != nil {
			c.cfg.Logger.Error("stream ack failed; the entries will be delivered again",
				"stream", c.cfg.Stream, "group", c.cfg.Group, "count", len(ids), "error", err)
		}
		cancel()
	}
}

// handle runs one entry and reports whether it is to be acked. Dead-lettered entries
// are acked by the move itself and report false.
func (c *Consumer) handle(ctx context.Context, e Entry, h hub.Handler) bool {
	cfg := c.cfg
	if e.Values == nil {
		// Deleted (trimmed) while pending: there is nothing left to deliver, and keeping
		// it pending would make it come back forever (watermill-redisstream PR #38).
		return true
	}
	typ, eventID := cfg.EntryIdentity(e.Values)
	c.mReceived.Inc()
	if ms, ok := entryMillis(e.ID); ok {
		c.mLag.Observe(time.Since(time.UnixMilli(ms)).Seconds())
	}
	if e.Deliveries > int64(cfg.MaxDeliveries) {
		errText := fmt.Sprintf("delivered %d times without success", e.Deliveries)
		if last, ok := c.lastErr.Load(e.ID); ok {
			errText = last.(string)
		}
		c.deadLetter(ctx, e, typ, eventID, errText, streams.ReasonMaxDeliveries)
		return false
	}
	ev, err := cfg.Decode(e.Values)
	if err != nil {
		c.deadLetter(ctx, e, typ, eventID, err.Error(), streams.ReasonMalformed)
		return false
	}
	if cfg.Versions != nil {
		if err := cfg.Versions.CheckVersion(ev); err != nil {
			c.deadLetter(ctx, e, typ, eventID, err.Error(), streams.ReasonUnknownVersion)
			return false
		}
	}
	// E4, E7, R8: from here on the context carries the event, its tenant, correlation
	// id and the publisher's span (logs included), so whatever the handler publishes
	// continues the request chain and the trace.
	ctx = hub.ContextWithEvent(ctx, ev)
	debug := cfg.Logger.Enabled(ctx, slog.LevelDebug)
	if debug {
		cfg.Logger.DebugContext(ctx, "event_received", "type", typ, "event_id", eventID, "group", cfg.Group, "consumer", cfg.Consumer)
	}
	key := cfg.Group + ":" + ev.ID
	if cfg.Idempotency != nil {
		seen, err := cfg.Idempotency.Seen(ctx, key)
		switch {
		case err != nil:
			cfg.Logger.WarnContext(ctx, "idempotency check failed; handling the event anyway", "event_id", eventID, "error", err)
		case seen:
			c.mDuplicate.Inc()
			return true
		}
	}
	start := time.Now()
	if err := call(ctx, h, ev); err != nil {
		c.mFailed.Inc()
		if ctx.Err() == nil && e.Deliveries >= int64(cfg.MaxDeliveries) {
			c.deadLetter(ctx, e, typ, eventID, err.Error(), streams.ReasonMaxDeliveries)
			return false
		}
		c.lastErr.Store(e.ID, err.Error())
		cfg.Logger.WarnContext(ctx, "event_failed", "type", typ, "event_id", eventID, "error", err.Error(), "retry_count", e.Deliveries-1)
		return false
	}
	if cfg.Idempotency != nil {
		if err := cfg.Idempotency.MarkProcessed(ctx, key, cfg.IdempotencyTTL); err != nil {
			cfg.Logger.WarnContext(ctx, "idempotency record failed; a redelivery would run the handler again", "event_id", eventID, "error", err)
		}
	}
	c.lastErr.Delete(e.ID)
	c.mAcked.Inc()
	if debug {
		cfg.Logger.DebugContext(ctx, "event_acked", "type", typ, "event_id", eventID, "elapsed_ms", time.Since(start).Milliseconds())
	}
	return true
}

// deadLetter moves an entry to the DLQ stream and acks it in one atomic backend call
// (R4.6, N2). If the move fails the entry stays pending and a later claim retries it.
func (c *Consumer) deadLetter(ctx context.Context, e Entry, typ, eventID, errText, reason string) {
	cfg := c.cfg
	fields := streams.DeadLetterFields(e.Values, errText, e.Deliveries, cfg.Stream, cfg.Group, e.ID, reason)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ioTimeout)
	defer cancel()
	if err := c.b.DeadLetter(dctx, cfg.Stream, cfg.Group, e.ID, cfg.DLQStream, fields); err != nil {
		cfg.Logger.ErrorContext(ctx, "dead-letter move failed; the entry stays pending", "entry_id", e.ID, "event_id", eventID, "error", err)
		return
	}
	c.lastErr.Delete(e.ID)
	cfg.Metrics.DLQ.WithLabelValues(cfg.Transport, cfg.Stream, reason).Inc()
	cfg.Logger.WarnContext(ctx, "event_dlq", "type", typ, "event_id", eventID, "final_error", errText)
}

// call runs the handler, turning a panic into an error so one bad event cannot crash
// the consumer (N2's "does not crash" applied to handlers too).
func call(ctx context.Context, h hub.Handler, ev *cloudevent.Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = hub.Errorf(hub.Internal, "handler panicked: %v", r)
		}
	}()
	return h(ctx, ev)
}

// entryMillis extracts the append time from an entry id "<ms>-<seq>".
func entryMillis(id string) (int64, bool) {
	ms, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	return n, err == nil
}
