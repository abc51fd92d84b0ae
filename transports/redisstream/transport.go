// Package redisstream is the Redis Streams transport of seed 000: stream naming (R1),
// the R2 field envelope, trimmed appends (R6), the consumer-group loop with claims and
// a dead-letter stream (R4), an idempotency store (R5), TLS and AUTH from a URL (R7),
// the R8 logs and metrics, and DLQ operations (W3).
//
// The publisher and the consumer are built directly on go-redis v9 rather than on
// watermill-redisstream, which reads one entry per round trip, waits for each ack,
// keeps no delivery count and sends one XADD per round trip (see docs/redisstream.md).
package redisstream

import (
	"context"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// Transport appends events to Redis streams (the publishing half, hub.Transport).
//
// Send is safe for concurrent use. Concurrent Sends are coalesced: while Pipelines
// round trips are in flight, further Sends queue, and the next round trip carries all
// of them (up to MaxBatch events) in one pipeline, so throughput is not bounded by one
// round trip per event while a lone Send still leaves at once, from its own goroutine. A Send returns when Redis replied to all its
// XADDs; it does not retry (the hub does). A batch is not atomic: on error some of its
// events may have been appended.
//
// Close closes the go-redis client only when Open created it.
type Transport struct {
	client redis.UniversalClient
	owned  bool
	cfg    Config
	namer  streams.Namer
	wire   streams.Wire
	ret    streams.Retention
	trim   *minIDTrimmer

	mu       sync.Mutex
	closed   bool
	busy     int        // round trips in flight, at most cfg.Pipelines
	queue    []*sendReq // Sends waiting for a round trip
	inflight sync.WaitGroup

	counters sync.Map // [stream, outcome] -> prometheus.Counter

	closeOnce sync.Once
	closeErr  error
}

type sendReq struct {
	args []redis.XAddArgs
	err  error         // the first error among args' replies, set by flush
	done chan struct{} // closed after flush; nil when the caller flushes it itself
}

// New returns a Transport over a client the caller owns (Close leaves it open). It
// reads no environment and does no I/O.
func New(client redis.UniversalClient, cfg Config) (*Transport, error) {
	if client == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "redisstream: nil client")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Transport{client: client, cfg: cfg, namer: cfg.selection().Resolve(), wire: cfg.wire(), ret: cfg.retention()}
	if cfg.MinIDAge > 0 || cfg.Namer != nil { // a Namer may pick per-category streams (E8: 7 days)
		t.trim = newMinIDTrimmer(t.ret)
	}
	return t, nil
}

// Name labels the transport in metrics, logs and failure events.
func (t *Transport) Name() string { return t.cfg.Name }

// Client returns the go-redis client, for consumers, DLQ tools and the idempotency
// store sharing the connection pool.
func (t *Transport) Client() redis.UniversalClient { return t.client }

// Health pings the server.
func (t *Transport) Health(ctx context.Context) error {
	return classify(t.client.Ping(ctx).Err())
}

// Send appends each event to its stream in the configured encoding (R2 by default,
// never an empty field: see streams.Wire) with the stream's trimming (MAXLEN ~ for R1
// streams, MINID ~ 7 days for per-category ones: streams.Retention), in as few round
// trips as possible. An event without a subject fails with InvalidArgument when R2
// needs one and no DefaultSubject is configured.
func (t *Transport) Send(ctx context.Context, batch []*cloudevent.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(batch) == 0 {
		return nil
	}
	args := make([]redis.XAddArgs, len(batch))
	for i, ev := range batch {
		stream, fields, err := t.wire.EncodeEvent(ctx, "redisstream", t.namer, i, ev)
		if err != nil {
			return err
		}
		args[i] = redis.XAddArgs{Stream: stream, Values: fields, Approx: true}
		if maxLen, _ := t.ret.For(stream); maxLen > 0 {
			args[i].MaxLen = maxLen
		}
	}
	r := &sendReq{args: args}
	queued, err := t.submit(r)
	if err != nil {
		return err
	}
	if queued {
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err() // the append may still happen: the hub's retry tolerates a duplicate
		}
	}
	t.record(ctx, batch, args, r.err)
	return r.err
}

// record emits the R8 publish log and counters.
func (t *Transport) record(ctx context.Context, batch []*cloudevent.Event, args []redis.XAddArgs, err error) {
	outcome := "emitted"
	if err != nil {
		outcome = "publish_error"
		t.cfg.Logger.WarnContext(ctx, "redis stream append failed", "transport", t.cfg.Name,
			"stream", args[0].Stream, "events", len(batch), "error", err)
	}
	log := err == nil && t.cfg.Logger.Enabled(ctx, slog.LevelDebug)
	prev := ""
	var counter prometheus.Counter
	n := 0
	for i, ev := range batch {
		s := args[i].Stream
		if s != prev {
			if counter != nil {
				counter.Add(float64(n))
			}
			counter, n, prev = t.counter(s, outcome), 0, s
		}
		n++
		if log {
			t.cfg.Logger.DebugContext(ctx, "event_emitted", "type", ev.Type, "event_id", ev.ID, "subject_id", ev.Subject, "stream", s)
		}
	}
	counter.Add(float64(n))
}

// counter returns event_count_total for a stream and outcome, resolving the label
// values once per stream rather than once per event.
func (t *Transport) counter(stream, outcome string) prometheus.Counter {
	k := [2]string{stream, outcome}
	if c, ok := t.counters.Load(k); ok {
		return c.(prometheus.Counter)
	}
	c := t.cfg.Metrics.EventCount.WithLabelValues(t.cfg.Name, stream, outcome)
	t.counters.Store(k, c)
	return c
}

// RequiresSubject reports whether Send refuses events without a subject (the R2
// encoding without a DefaultSubject), so the hub refuses them at Publish and names the
// route (hub.SubjectRequirer).
func (t *Transport) RequiresSubject() bool { return t.wire.RequiresSubject() }

// Close stops accepting Sends, waits for the round trips in flight, and closes the
// client if Open created it. It is idempotent.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		t.inflight.Wait()
		if t.owned {
			t.closeErr = classify(t.client.Close())
		}
	})
	return t.closeErr
}

var (
	_ hub.Transport       = (*Transport)(nil)
	_ hub.Named           = (*Transport)(nil)
	_ hub.HealthChecker   = (*Transport)(nil)
	_ hub.SubjectRequirer = (*Transport)(nil)
)
