package app

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/koder/eventhub/cmd/hub/internal/admin"
)

func (a *App) adminServer() *admin.Server {
	cfg := &a.plan.File.Config
	s := &admin.Server{Token: cfg.Admin.Token, Gatherer: a.reg, Logger: a.log, Ready: a.ready.Load}
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
	return s
}

func metricsOnly(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	return mux
}
