package rabbitmq

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Transport publishes events to a durable topic exchange (B1): routing key = event
// type, so hub patterns work unchanged as binding keys; persistent delivery; publisher
// confirms tracked asynchronously over a pool of channels; mandatory returns reported as
// NotFound. Send returns only after every event of the batch is confirmed.
type Transport struct {
	cfg    Config
	conn   *connection
	log    *slog.Logger
	next   atomic.Uint64
	closed atomic.Bool

	mu    sync.Mutex
	slots []*confirmChannel // opened lazily, reopened after a loss

	emitted, publishErrors prometheus.Counter // R8 children, resolved once
}

// New validates cfg, connects and declares the exchange. It fails (Unavailable,
// PermissionDenied, FailedPrecondition...) when the broker cannot be reached or the
// exchange exists with another type; later outages are recovered in the background.
func New(ctx context.Context, cfg Config) (*Transport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Transport{cfg: cfg, slots: make([]*confirmChannel, cfg.Channels)}
	t.log = cfg.Logger.With("transport", transportLabel)
	t.emitted = cfg.Metrics.EventCount.WithLabelValues(transportLabel, cfg.Exchange, "emitted")
	t.publishErrors = cfg.Metrics.EventCount.WithLabelValues(transportLabel, cfg.Exchange, "publish_error")
	conn, err := dialConnection(ctx, &t.cfg, "publisher", t.declare)
	if err != nil {
		return nil, err
	}
	t.conn = conn
	return t, nil
}

func (t *Transport) declare(conn *amqp.Connection) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	return declareExchange(ch, t.cfg.Exchange)
}

// Name labels metrics and failure events.
func (t *Transport) Name() string { return transportLabel }

// Health reports whether the broker connection is up.
func (t *Transport) Health(context.Context) error {
	_, _, err := t.conn.current()
	return err
}

// Send publishes the batch on one pooled channel and waits for every confirm. During a
// connection outage it fails at once with Unavailable; a context without a deadline
// waits at most Config.ConfirmTimeout. An error names how many events failed and
// carries the first failure's code; events of a failed batch may still have been
// stored (at-least-once: retrying duplicates, never loses).
func (t *Transport) Send(ctx context.Context, batch []*cloudevent.Event) error {
	if t.closed.Load() {
		return hub.Errorf(hub.FailedPrecondition, "rabbitmq: Send after Close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(batch) == 0 {
		return nil
	}
	now := time.Now()
	msgs := make([]outMsg, len(batch))
	for i, ev := range batch {
		p, err := encode(ev, t.cfg.Mode, now)
		if err != nil {
			return err
		}
		msgs[i] = outMsg{exchange: t.cfg.Exchange, key: ev.Type, pub: p}
	}
	cc, err := t.channel()
	if err != nil {
		t.publishErrors.Add(float64(len(batch)))
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.cfg.ConfirmTimeout)
		defer cancel()
	}
	b := newBatchWait(len(msgs))
	cc.publish(ctx, msgs, b, 0)
	select {
	case <-b.done:
	case <-ctx.Done():
		t.publishErrors.Add(float64(len(batch)))
		return ctx.Err()
	}
	err = b.firstError()
	for i, ev := range batch {
		if b.errs[i] != nil {
			t.publishErrors.Inc()
			continue
		}
		t.emitted.Inc()
		if t.log.Enabled(ctx, slog.LevelInfo) {
			t.log.LogAttrs(ctx, slog.LevelInfo, "event_emitted", slog.String("type", ev.Type), slog.String("event_id", ev.ID),
				slog.String("subject_id", ev.Subject), slog.String("stream", t.cfg.Exchange))
		}
	}
	return err
}

// channel returns a live pooled channel, round robin, reopening a dead slot on the
// current connection.
func (t *Transport) channel() (*confirmChannel, error) {
	if err := t.conn.publishBlocked(); err != nil {
		return nil, err
	}
	i := int(t.next.Add(1) % uint64(len(t.slots)))
	t.mu.Lock()
	defer t.mu.Unlock()
	if cc := t.slots[i]; cc != nil && cc.alive() {
		return cc, nil
	}
	conn, gen, err := t.conn.current()
	if err != nil {
		return nil, err
	}
	cc, err := openConfirmChannel(conn, gen, t.cfg.mandatory(), t.cfg.MaxInFlight)
	if err != nil {
		return nil, err
	}
	t.slots[i] = cc
	return cc, nil
}

// Close closes the channels and the connection it opened. Sends still waiting for
// confirms fail with Unavailable. It is idempotent.
func (t *Transport) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	t.mu.Lock()
	for _, cc := range t.slots {
		if cc != nil {
			cc.close()
		}
	}
	t.mu.Unlock()
	t.conn.close()
	return nil
}

var (
	_ hub.Transport     = (*Transport)(nil)
	_ hub.Named         = (*Transport)(nil)
	_ hub.HealthChecker = (*Transport)(nil)
)
