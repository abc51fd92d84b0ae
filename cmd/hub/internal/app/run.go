package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/cmd/hub/internal/store"
	"github.com/koder/eventhub/dedupe"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/outbox"
	"github.com/koder/eventhub/transports/kdbstream/resp"
)

// App is a running hub: transports open, routes forwarding, sources feeding it, the
// admin API listening.
type App struct {
	plan    *Plan
	log     *slog.Logger
	rt      *registry.Runtime
	store   *store.Store
	hub     *hub.Hub
	outbox  *outbox.Outbox
	failed  *failureSink // nil: failure events are not recorded outside the process
	reg     *prometheus.Registry
	ready   atomic.Bool
	servers []*http.Server
	resp    *resp.Server // the Redis protocol listener (resp.go), when configured
	addrs   map[string]string
	// stopBackground ends the access layer's background work (access.go).
	stopBackground func()
	// stopTracing flushes and stops the OTLP exporter (tracing.go); nil: not started.
	stopTracing func(context.Context) error

	transports []openTransport
	started    []Section[registry.SourceModule]
}

type openTransport struct {
	name string
	id   registry.ID
	mod  registry.TransportModule
	t    hub.Transport
}

// Start opens and starts everything in order: metrics registry, the hub (with the
// outbox when a route uses it, and the failure sink), transports, the failure sink's
// target, routes, the ledger, the admin and metrics listeners, then sources. The hub comes first so the runtime every module receives is
// complete: sources find the publisher there. A failure closes what already started,
// in reverse.
func Start(ctx context.Context, p *Plan) (a *App, err error) {
	cfg := &p.File.Config
	a = &App{plan: p, log: p.Logger, addrs: map[string]string{}}
	a.reg = prometheus.NewRegistry()
	a.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.store = store.New(cfg.Store, p.File, p.Env, p.Logger)
	a.rt = &registry.Runtime{Logger: p.Logger, Registry: a.reg, Schemas: p.Schemas, Store: a.store,
		StreamMetrics: hub.NewStreamMetrics(a.reg)}
	defer func() {
		if err != nil {
			closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
			defer cancel()
			if cerr := a.Close(closeCtx); cerr != nil {
				p.Logger.Warn("cleanup after failed start", "error", cerr)
			}
			a = nil
		}
	}()
	if a.stopTracing, err = startTracing(ctx, cfg, p.Env, p.Logger); err != nil {
		return nil, err
	}

	opts := []hub.Option{hub.WithLogger(p.Logger), hub.WithRegisterer(a.reg), hub.WithRegistry(p.Schemas),
		hub.WithCloseTimeout(cfg.ShutdownTimeout / 2)} // the rest of the bound is for the ledger and transports
	dest := &outbox.Destinations{}
	if usesOutbox(cfg) {
		if a.outbox, err = openOutbox(ctx, a, dest); err != nil {
			return a, fmt.Errorf("outbox: %w", err)
		}
		// The wrapper records the ingress's accepted event ids in the rows' own
		// transaction (R5 dedupe): a failed publish leaves no record.
		opts = append(opts, hub.WithOutbox(dedupe.WrapOutbox(a.outbox)))
	}
	if sink := cfg.Sink(); sink != (config.FailureSink{}) {
		if a.failed, err = newFailureSink(sink, a.reg, p.Logger); err != nil {
			return a, fmt.Errorf("failures: %w", err)
		}
		opts = append(opts, hub.WithFailureSink(a.failed))
	}
	if a.hub, err = hub.New(opts...); err != nil {
		return a, fmt.Errorf("hub: %w", err)
	}
	a.rt.Publisher = a.hub

	// Webhook transports use the ledger: open it before any transport, so that a
	// kdbstream transport on the same SQLite file shares its connection whatever the
	// order of the sections (the outbox has opened it already when a route uses it).
	for _, s := range p.Transports {
		if s.ID == "transport.webhook" && cfg.Store.SQLite != "" {
			if _, err := a.store.Ledger(ctx); err != nil {
				return a, err
			}
			break
		}
	}
	for _, s := range p.Transports {
		t, err := s.Module.Open(ctx, a.rt)
		if err != nil {
			return a, fmt.Errorf("transports.%s (%s): open: %w", s.Name, s.ID, err)
		}
		a.transports = append(a.transports, openTransport{s.Name, s.ID, s.Module, t})
		p.Logger.Info("transport open", "name", s.Name, "module", string(s.ID))
	}
	if a.failed != nil {
		if err := a.failed.open(ctx, a); err != nil {
			return a, fmt.Errorf("failures: %w", err)
		}
	}
	if err := a.forward(dest); err != nil {
		return a, err
	}
	if err := a.startAccess(ctx); err != nil {
		return a, err
	}
	// The ledger works webhook deliveries and outbox rows; it starts once every module
	// registered its workers and queues.
	if err := a.store.Start(ctx); err != nil {
		return a, err
	}
	// Listeners bind before intake starts, so a port in use fails the start before any
	// event is accepted; /readyz says ready only once everything runs.
	if cfg.Admin.AdminEnabled() {
		srv, err := a.adminServer(ctx)
		if err != nil {
			return a, err
		}
		if err := a.listen("admin", cfg.Admin.Listen, srv.Handler(), cfg.Admin.TLS); err != nil {
			return a, err
		}
	}
	if cfg.Metrics.Listen != "" {
		h, err := metricsListener(cfg.Metrics, a.gatherer())
		if err != nil {
			return a, err
		}
		if err := a.listen("metrics", cfg.Metrics.Listen, h, config.TLS{}); err != nil {
			return a, err
		}
	}
	if cfg.RESP.Enabled() {
		if err := a.startRESP(ctx); err != nil {
			return a, err
		}
	}
	filtered, err := newSourceFilteredCounter(a.reg)
	if err != nil {
		return a, err
	}
	for _, s := range p.Sources {
		rt, err := a.sourceRuntime(s.Name, cfg.Sources[s.Name].Filter, filtered)
		if err != nil {
			return a, fmt.Errorf("sources.%s (%s): filter: %w", s.Name, s.ID, err)
		}
		if err := s.Module.Start(ctx, rt); err != nil {
			return a, fmt.Errorf("sources.%s (%s): start: %w", s.Name, s.ID, err)
		}
		a.started = append(a.started, s)
		p.Logger.Info("source started", "name", s.Name, "module", string(s.ID))
	}
	a.ready.Store(true)
	p.Logger.Info("hub running", "transports", len(a.transports), "routes", len(cfg.Routes), "sources", len(a.started))
	return a, nil
}

// forward adds every route target to the hub, registering outbox routes' transports
// as the relay's destinations under the same name.
func (a *App) forward(dest *outbox.Destinations) error {
	for _, r := range a.plan.File.Config.Routes {
		for _, to := range r.To {
			t := a.transport(to)
			name := RouteName(to, r.Pattern)
			ropts := []hub.RouteOption{hub.WithName(name)}
			if r.Delivery == config.DeliveryOutbox {
				ropts = append(ropts, hub.WithDelivery(hub.OutboxMode))
				dest.Set(name, t)
			}
			if r.Retry.Attempts > 0 || r.Retry.Backoff > 0 || r.Retry.BackoffMax > 0 {
				// Zero fields keep the hub's defaults (WithRetry).
				ropts = append(ropts, hub.WithRetry(r.Retry.Attempts, r.Retry.Backoff, r.Retry.BackoffMax))
			}
			if r.DefaultSubject != "" {
				ropts = append(ropts, hub.WithDefaultSubject(r.DefaultSubject))
			}
			ropts = append(ropts, hub.WithFilter(r.Filter)) // "" is none
			if err := a.hub.Forward(r.Pattern, t, ropts...); err != nil {
				return fmt.Errorf("route %q -> %s: %w", r.Pattern, to, err)
			}
		}
	}
	return nil
}

// ReadHeaderTimeout bounds reading a request's headers on the admin and metrics
// listeners: a client that connects and sends nothing holds a connection this long at
// most, while every real client sends its headers at once.
const ReadHeaderTimeout = 10 * time.Second

// RouteName is the hub route name (and outbox destination) of one route target: stable
// across restarts and config reordering, so outbox rows written before a restart find
// their transport after it.
func RouteName(transport, pattern string) string { return transport + ":" + pattern }

func (a *App) transport(name string) hub.Transport {
	for _, t := range a.transports {
		if t.name == name {
			return t.t
		}
	}
	return nil
}

// listen serves h on addr in the background, with the header limits of auth.Harden,
// over TLS when tc names a pair (reloaded without restart).
func (a *App) listen(what, addr string, h http.Handler, tc config.TLS) error {
	var tlsCfg *tls.Config
	if tc.Enabled() {
		cr, err := auth.NewCertReloader(a.plan.File.Resolve(tc.CertFile), a.plan.File.Resolve(tc.KeyFile), tc.ReloadInterval, a.log)
		if err != nil {
			return fmt.Errorf("%s: tls: %w", what, err)
		}
		tlsCfg = cr.TLSConfig()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	a.addrs[what] = ln.Addr().String()
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	srv := auth.Harden(&http.Server{Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, TLSConfig: tlsCfg,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)})
	a.servers = append(a.servers, srv)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error(what+" listener stopped", "error", err)
		}
	}()
	a.log.Info(what+" listening", "addr", a.addrs[what], "tls", tlsCfg != nil)
	return nil
}

// Addr returns the bound address of "admin", "metrics" or "resp".
func (a *App) Addr(what string) string { return a.addrs[what] }

// Hub returns the running hub.
func (a *App) Hub() *hub.Hub { return a.hub }

// Runtime returns the runtime shared with the modules.
func (a *App) Runtime() *registry.Runtime { return a.rt }

// Close stops intake first (sources: the HTTP ingress finishes in-flight requests, each
// of which returned from Publish), then closes the hub (drains direct deliveries),
// stops the ledger (running deliveries and outbox sends finish, or are cancelled at the
// deadline and retried after a restart; queued ones stay in the database), closes the
// transports and the listeners, and closes the store, all within ctx's deadline.
func (a *App) Close(ctx context.Context) error {
	var errs []error
	a.ready.Store(false)
	for i := len(a.started) - 1; i >= 0; i-- {
		s := a.started[i]
		if err := s.Module.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("sources.%s: %w", s.Name, err))
		}
	}
	a.started = nil
	a.stopAccess()
	if a.hub != nil {
		if err := a.hub.Close(); err != nil {
			errs = append(errs, fmt.Errorf("hub: %w", err))
		}
	}
	if err := a.store.Stop(ctx); err != nil {
		errs = append(errs, err)
	}
	for i := len(a.transports) - 1; i >= 0; i-- {
		t := a.transports[i]
		if err := t.t.Close(); err != nil {
			errs = append(errs, fmt.Errorf("transports.%s: %w", t.name, err))
		}
	}
	a.transports = nil
	if err := a.closeRESP(); err != nil {
		errs = append(errs, fmt.Errorf("resp: %w", err))
	}
	if a.failed != nil {
		if err := a.failed.closeOwn(); err != nil {
			errs = append(errs, fmt.Errorf("failures: %w", err))
		}
	}
	for _, s := range a.servers {
		if err := s.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	a.servers = nil
	if err := a.store.Close(); err != nil {
		errs = append(errs, err)
	}
	if a.stopTracing != nil {
		if err := a.stopTracing(ctx); err != nil {
			errs = append(errs, fmt.Errorf("tracing: %w", err))
		}
		a.stopTracing = nil
	}
	return errors.Join(errs...)
}

func usesOutbox(c *config.Config) bool {
	for _, r := range c.Routes {
		if r.Delivery == config.DeliveryOutbox {
			return true
		}
	}
	return false
}
