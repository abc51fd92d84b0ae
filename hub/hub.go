package hub

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"go.opentelemetry.io/otel/trace"

	"github.com/koder/eventhub/cloudevent"
)

// Hub routes events by a pattern on their type to transports (Forward), to an outbox,
// and to in-process subscribers (Subscribe). It is the portable layer above the
// transports: validation, defaults, tenant and correlation stamping, tracing, the 3
// attempts, batching, metrics and the failure event live here, once.
//
// All methods are safe for concurrent use, including Publish from inside a handler.
type Hub struct {
	opts    options
	log     *slog.Logger
	metrics *hubMetrics
	tracer  trace.Tracer

	routes atomic.Pointer[[]*route]        // copy-on-write: Publish reads without locking
	subs   atomic.Pointer[[]*subscription] // copy-on-write
	subSeq atomic.Uint64

	// mu guards closed and the route queues' closing: Publish holds it shared while it
	// hands events to queues, Close exclusively while it closes them.
	mu      sync.RWMutex
	closed  bool
	closing chan struct{} // closed when Close starts: wakes publishers waiting for queue space
	routeMu sync.Mutex    // serializes Forward

	router     *message.Router
	routerDone chan struct{}
	// deliverCtx is the parent of every delivery; cancelled when Close times out so
	// retries and sends stop.
	deliverCtx    context.Context
	cancelDeliver context.CancelFunc
	drain         sync.WaitGroup // one per route sender; done when its queue is drained

	closeOnce sync.Once
	closeErr  error
}

// New returns a running Hub. It owns a Watermill router that carries direct deliveries;
// Close stops it.
func New(opts ...Option) (*Hub, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	o.setDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	m, err := newHubMetrics(o.registerer)
	if err != nil {
		return nil, err
	}
	// The router logs its lifecycle at Info; one level down keeps the application's
	// Info log about events, not plumbing.
	wlog := watermill.NewSlogLoggerWithLevelMapping(o.logger, map[slog.Level]slog.Level{
		slog.LevelInfo: slog.LevelDebug,
	})
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: o.closeTimeout}, wlog)
	if err != nil {
		return nil, Wrap(Internal, err)
	}
	h := &Hub{
		opts: o, log: o.logger, metrics: m, tracer: tracerFrom(o.tracerProvider),
		router: router, routerDone: make(chan struct{}), closing: make(chan struct{}),
	}
	h.deliverCtx, h.cancelDeliver = context.WithCancel(context.Background())
	h.routes.Store(&[]*route{})
	h.subs.Store(&[]*subscription{})
	go func() {
		defer close(h.routerDone)
		if err := router.Run(context.Background()); err != nil {
			h.log.Error("hub: delivery router stopped", "error", err)
		}
	}()
	select {
	case <-router.Running():
	case <-h.routerDone:
		return nil, Errorf(Internal, "hub: delivery router did not start")
	}
	return h, nil
}

// Forward sends every event whose type matches pattern (see Pattern) to t. It fails with
// InvalidArgument for a bad pattern or option, AlreadyExists for a duplicate route name,
// FailedPrecondition for outbox mode without WithOutbox or after Close.
//
// The hub does not own t: Close leaves it open, so one transport can serve several
// routes and hubs.
func (h *Hub) Forward(pattern string, t Transport, opts ...RouteOption) error {
	p, err := CompilePattern(pattern)
	if err != nil {
		return err
	}
	if t == nil {
		return Errorf(InvalidArgument, "hub: Forward(%q): nil transport", pattern)
	}
	h.routeMu.Lock()
	defer h.routeMu.Unlock()
	old := *h.routes.Load()
	var cfg routeConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	cfg.setDefaults(t, len(old)+1)
	if err := cfg.validate(); err != nil {
		return err
	}
	for _, r := range old {
		if r.cfg.name == cfg.name {
			return Errorf(AlreadyExists, "hub: route name %q already used (WithName picks another)", cfg.name)
		}
	}
	if cfg.mode == OutboxMode && h.opts.outbox == nil {
		return Errorf(FailedPrecondition, "hub: route %q: outbox mode needs WithOutbox", cfg.name)
	}
	r := &route{hub: h, pattern: p, transport: t, cfg: cfg, transportName: transportName(t, cfg.name)}
	if sr, ok := t.(SubjectRequirer); ok {
		r.requiresSubject = sr.RequiresSubject()
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return Errorf(FailedPrecondition, "hub: Forward after Close")
	}
	if cfg.mode == Direct {
		if err := h.startRoute(r); err != nil {
			return err
		}
	}
	routes := append(append(make([]*route, 0, len(old)+1), old...), r)
	h.routes.Store(&routes)
	return nil
}

func transportName(t Transport, fallback string) string {
	if n, ok := t.(Named); ok && n.Name() != "" {
		return n.Name()
	}
	return fallback
}

// Close stops intake (Publish, PublishTx and Forward then fail with FailedPrecondition),
// waits until every queued and in-flight direct delivery has finished (succeeded or
// become a failure event), up to WithCloseTimeout, and stops the router. On timeout it
// cancels the remaining deliveries and returns a DeadlineExceeded error. Transports
// are not closed. Idempotent: later calls return the first result.
func (h *Hub) Close() error {
	h.closeOnce.Do(func() { h.closeErr = h.close() })
	return h.closeErr
}

func (h *Hub) close() error {
	close(h.closing)
	h.mu.Lock()
	h.closed = true
	for _, r := range *h.routes.Load() {
		if r.queue != nil {
			close(r.queue)
		}
	}
	h.mu.Unlock()

	drained := make(chan struct{})
	go func() { h.drain.Wait(); close(drained) }()
	timer := time.NewTimer(h.opts.closeTimeout)
	defer timer.Stop()
	var err error
	select {
	case <-drained:
	case <-timer.C:
		left := 0
		for _, r := range *h.routes.Load() {
			left += len(r.queue)
		}
		err = Errorf(DeadlineExceeded, "hub: Close: deliveries still running after %s (%d events still queued); cancelled", h.opts.closeTimeout, left)
	}
	h.cancelDeliver()
	if err != nil {
		// Record what is still queued here rather than wait for the senders (they do the
		// same for anything they take first: the queue hands each event to one reader).
		for _, r := range *h.routes.Load() {
			if r.queue == nil { // outbox mode: nothing queued in memory
				continue
			}
			for q := range r.queue {
				h.transportFailed(r, []*cloudevent.Event{q.ev}, Errorf(Canceled, "hub: closed before delivery"), 0, OutcomeDropped)
			}
		}
		// In-flight sends see the cancelled context and become failure events; give that
		// the same bound once more rather than lose their records.
		select {
		case <-drained:
		case <-time.After(h.opts.closeTimeout):
		}
	}
	if cerr := h.router.Close(); cerr != nil && err == nil {
		err = Wrap(DeadlineExceeded, cerr)
	}
	<-h.routerDone
	return err
}
