// Package kdbstream is the hub's stream transport on its own SQL stream engine (R9):
// the same publisher and consumer behaviour as the Redis transport (R1 naming, R2
// fields, MAXLEN ~ trimming, the shared R4 consumer loop with claims and a DLQ, an R5
// idempotency store), stored in one SQLite file or in PostgreSQL. The engine
// (subpackage engine) reproduces Redis Streams' command semantics, so state migrated
// from Redis (Migrate) continues unchanged: KODER_EVENT_BUS=kdb-stream is a flag flip.
package kdbstream

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// Transport appends events to kdbstream streams (the publishing half, hub.Transport).
//
// Send is safe for concurrent use. There is no batching here: the engine's committer
// coalesces concurrent Sends into one transaction (group commit). A Send returns once
// its entries are committed with the engine's Synchronous setting; a batch is atomic
// (one transaction). Close closes the engine only when Open created it.
type Transport struct {
	eng    *engine.Engine
	owned  bool
	cfg    Config
	namer  streams.Namer
	wire   streams.Wire
	ret    streams.Retention
	closed atomic.Bool
	once   sync.Once
	err    error

	trimMu   sync.Mutex
	lastTrim map[string]time.Time

	ledger *ledger.Ledger // set by ShareLedger: SendTx writes in its transactions (sendtx.go)
}

// New returns a Transport over an engine the caller owns (Close leaves it open).
func New(eng *engine.Engine, cfg Config) (*Transport, error) {
	if eng == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "kdbstream: nil engine")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Transport{eng: eng, cfg: cfg, namer: cfg.selection().Resolve(), wire: cfg.wire(), ret: cfg.retention(),
		lastTrim: map[string]time.Time{}}, nil
}

// Name labels the transport in metrics, logs and failure events.
func (t *Transport) Name() string { return t.cfg.Name }

// Engine returns the stream engine, for consumers, the idempotency store and tools
// sharing it.
func (t *Transport) Engine() *engine.Engine { return t.eng }

// Health checks that the database answers.
func (t *Transport) Health(ctx context.Context) error {
	if err := t.eng.Ready(ctx); err != nil {
		return classify(err)
	}
	return classify(t.eng.DB().PingContext(ctx))
}

// Send appends each event to its stream in the configured encoding (R2 by default,
// never an empty field: see streams.Wire) with the stream's trimming (MAXLEN ~ for R1
// streams, MINID 7 days for per-category ones: streams.Retention), in one transaction
// shared with concurrent Sends. An event without a subject fails with InvalidArgument
// when R2 needs one and no DefaultSubject is configured.
func (t *Transport) Send(ctx context.Context, batch []*cloudevent.Event) error {
	if err := t.refuse(ctx); err != nil || len(batch) == 0 {
		return err
	}
	adds, aged, err := t.adds(ctx, batch)
	if err != nil {
		return err
	}
	res, err := t.eng.Append(ctx, adds)
	err = classify(firstErr(res, err))
	t.record(ctx, batch, adds, err)
	if err == nil && aged {
		t.trimByAge(ctx, adds)
	}
	return err
}

// refuse is the error of a Send or SendTx on a closed transport or an ended context.
func (t *Transport) refuse(ctx context.Context) error {
	if t.closed.Load() {
		return hub.Errorf(hub.FailedPrecondition, "kdbstream: transport %q is closed", t.cfg.Name)
	}
	return ctx.Err()
}

// adds encodes batch as XADDs with their streams' MAXLEN trims; aged reports whether a
// stream has an age trim (trimByAge's, after the append).
func (t *Transport) adds(ctx context.Context, batch []*cloudevent.Event) (adds []engine.Add, aged bool, err error) {
	adds = make([]engine.Add, len(batch))
	for i, ev := range batch {
		stream, fields, err := t.wire.EncodeEvent(ctx, "kdbstream", t.namer, i, ev)
		if err != nil {
			return nil, false, err
		}
		adds[i] = engine.Add{Stream: stream, Values: fields}
	}
	for i := range adds {
		maxLen, age := t.ret.For(adds[i].Stream)
		aged = aged || age > 0
		// One trim per stream per batch is enough for "~": it may trim less, never more.
		if maxLen > 0 && (i == len(adds)-1 || adds[i].Stream != adds[i+1].Stream) {
			adds[i].Trim = &engine.Trim{Approx: true, MaxLen: maxLen, Limit: -1}
		}
	}
	return adds, aged, nil
}

// firstErr is err, or else the first XADD's refusal in res.
func firstErr(res []engine.AddResult, err error) error {
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// trimByAge runs XTRIM MINID ~ <now - age> on each stream with an age trim (its own
// age: streams.Retention.For) at most once a second.
func (t *Transport) trimByAge(ctx context.Context, adds []engine.Add) {
	now := time.Now()
	due := map[string]time.Duration{}
	t.trimMu.Lock()
	for _, a := range adds {
		_, age := t.ret.For(a.Stream)
		if age > 0 && now.Sub(t.lastTrim[a.Stream]) >= minIDTrimInterval {
			t.lastTrim[a.Stream] = now
			due[a.Stream] = age
		}
	}
	t.trimMu.Unlock()
	for s, age := range due {
		min, _ := engine.ParseID(strconv.FormatInt(now.Add(-age).UnixMilli(), 10), 0)
		if _, err := t.eng.XTrim(ctx, s, engine.Trim{MinID: true, Approx: true, Min: min, Limit: -1}); err != nil {
			t.cfg.Logger.WarnContext(ctx, "kdbstream MINID trim failed", "stream", s, "error", err)
		}
	}
}

// record emits the R8 publish log and counters.
func (t *Transport) record(ctx context.Context, batch []*cloudevent.Event, adds []engine.Add, err error) {
	outcome := "emitted"
	if err != nil {
		outcome = "publish_error"
		t.cfg.Logger.WarnContext(ctx, "kdbstream append failed", "transport", t.cfg.Name,
			"stream", adds[0].Stream, "events", len(batch), "error", err)
	}
	log := err == nil && t.cfg.Logger.Enabled(ctx, slog.LevelDebug)
	counts := map[string]int{}
	for i, ev := range batch {
		counts[adds[i].Stream]++
		if log {
			t.cfg.Logger.DebugContext(ctx, "event_emitted", "type", ev.Type, "event_id", ev.ID, "subject_id", ev.Subject, "stream", adds[i].Stream)
		}
	}
	for s, n := range counts {
		t.cfg.Metrics.EventCount.WithLabelValues(t.cfg.Name, s, outcome).Add(float64(n))
	}
}

// RequiresSubject reports whether Send refuses events without a subject (the R2
// encoding without a DefaultSubject), so the hub refuses them at Publish and names the
// route (hub.SubjectRequirer).
func (t *Transport) RequiresSubject() bool { return t.wire.RequiresSubject() }

// Close stops accepting Sends and closes the engine if Open created it. Idempotent.
func (t *Transport) Close() error {
	t.once.Do(func() {
		t.closed.Store(true)
		if t.owned {
			t.err = t.eng.Close()
		}
	})
	return t.err
}

var (
	_ hub.Transport       = (*Transport)(nil)
	_ hub.Named           = (*Transport)(nil)
	_ hub.HealthChecker   = (*Transport)(nil)
	_ hub.SubjectRequirer = (*Transport)(nil)
)
