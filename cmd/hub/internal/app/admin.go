package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cmd/hub/internal/admin"
	"github.com/koder/eventhub/cmd/hub/internal/config"
)

func (a *App) adminServer(ctx context.Context) (*admin.Server, error) {
	cfg := &a.plan.File.Config
	acc, err := a.adminAccess()
	if err != nil {
		return nil, err
	}
	s := &admin.Server{Access: acc, Gatherer: a.gatherer(), Logger: a.log, Ready: a.ready.Load, Audit: &auth.AuditLog{Logger: a.log}}
	if s.Keyring, err = a.store.Keyring(); err != nil {
		return nil, err
	}
	if cfg.Store.Configured() {
		if s.Keys, err = a.store.Keys(ctx); err != nil {
			return nil, err
		}
		if s.AuditStore, err = a.store.Audit(ctx); err != nil {
			return nil, err
		}
		s.Audit.Store = s.AuditStore
	}
	for _, r := range cfg.Routes {
		ar := admin.Route{Pattern: r.Pattern, To: r.To, Delivery: r.Delivery, Attempts: r.Retry.Attempts}
		if r.Retry.Backoff > 0 {
			ar.Backoff = r.Retry.Backoff.String()
		}
		if r.Retry.BackoffMax > 0 {
			ar.BackoffMax = r.Retry.BackoffMax.String()
		}
		s.Routes = append(s.Routes, ar)
	}
	for _, t := range a.transports {
		s.Transports = append(s.Transports, admin.Transport{Name: t.name, Type: string(t.id), Transport: t.t, Module: t.mod})
	}
	for _, src := range a.plan.Sources {
		s.Sources = append(s.Sources, admin.Transport{Name: src.Name, Type: string(src.ID), Module: src.Module})
	}
	s.Outbox = a.outbox
	if err := a.console(s); err != nil { // the web console at /ui (console.go)
		return nil, err
	}
	return s, nil
}

// adminAccess builds the admin API's access layer from the admin and auth sections:
// the tokens of admin.token and admin.token_file, link tokens signed with a key derived
// from the secret key ring (none without a ring), the request guard and the bound.
func (a *App) adminAccess() (admin.Access, error) {
	cfg := &a.plan.File.Config
	tokens, err := auth.LoadAdminTokens(cfg.Admin.Token, a.plan.File.Resolve(cfg.Admin.TokenFile))
	if err != nil {
		return admin.Access{}, fmt.Errorf("admin: %w", err)
	}
	if short := tokens.Short(); len(short) > 0 {
		a.log.Warn("admin tokens shorter than 24 characters can be guessed; generate tokens with `hub token generate`", "ids", short)
	}
	g, err := auth.NewGuard(auth.GuardConfig{ListenAddr: cfg.Admin.Listen, Hosts: cfg.Admin.Hosts, Origins: cfg.Admin.Origins})
	if err != nil {
		return admin.Access{}, fmt.Errorf("admin: %w", err)
	}
	acc := admin.Access{Tokens: tokens, Guard: g, LinkTTL: cfg.Auth.Links.TTL}
	if cfg.Admin.MaxConcurrent > 0 {
		acc.Concurrency = auth.NewConcurrencyLimiter(cfg.Admin.MaxConcurrent)
	}
	ring, err := a.store.Keyring()
	if err != nil {
		return admin.Access{}, err
	}
	if ring != nil {
		if acc.Links, err = auth.NewLinkSigner(ring.DeriveKeys("link-tokens")...); err != nil {
			return admin.Access{}, err
		}
		if cfg.Store.Configured() {
			if acc.Revocations, err = a.store.LinkRevocations(context.Background()); err != nil {
				return admin.Access{}, err
			}
			acc.Links = acc.Links.WithRevocations(acc.Revocations)
		}
	}
	return acc, nil
}

// metricsListener is the metrics listener's handler: metricsOnly behind the request
// guard's Host and cross-site checks (no token: Prometheus scrapes it as it is).
func metricsListener(cfg config.Metrics, g prometheus.Gatherer) (http.Handler, error) {
	guard, err := auth.NewGuard(auth.GuardConfig{ListenAddr: cfg.Listen, Hosts: cfg.Hosts})
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return guard.Middleware(metricsOnly(g, cfg.Pprof)), nil
}

// metricsOnly serves /metrics and, with withPprof, the runtime's profiles under
// /debug/pprof/ (net/http/pprof's handlers, mounted on this mux only rather than on
// http.DefaultServeMux).
func metricsOnly(g prometheus.Gatherer, withPprof bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	if withPprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}
