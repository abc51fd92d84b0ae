package modules

import (
	"context"
	"errors"
	"fmt"

	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/cmd/hub/internal/store"
	"github.com/koder/eventhub/dedupe"
	"github.com/koder/eventhub/hub"
)

// openDeduper builds the ingress's window of accepted event ids (R5): a table in the
// store's database when the config has a store (it survives restarts, and outbox routes
// record it in the transaction of their rows, see dedupe.WrapOutbox), else an in-memory
// window of at most dedupe_max_entries ids. The returned close stops the table's prune.
func (s *HTTPSource) openDeduper(ctx context.Context, rt *registry.Runtime) (hub.EventDeduper, func() error, error) {
	nothing := func() error { return nil }
	if s.NoDedupe {
		return nil, nothing, nil
	}
	l, err := rt.Ledger(ctx)
	if errors.Is(err, store.ErrNone) {
		rt.Logger.Info("ingress dedupe window in memory (no store)", "max_entries", s.DedupeMaxEntries, "window", s.DedupeWindow)
		return hub.NewMemoryEventDeduper(s.DedupeMaxEntries), nothing, nil
	}
	if err != nil {
		return nil, nil, err
	}
	d, err := dedupe.Open(ctx, l, dedupe.Config{OutboxOnly: s.outboxOnly, Logger: rt.Logger})
	if err != nil {
		return nil, nil, fmt.Errorf("ingress: dedupe: %w", err)
	}
	return d, d.Close, nil
}

// onlyOutboxRoutes reports whether every route of the config is an outbox route: then
// every event the ingress publishes goes through the outbox's transaction (the app wraps
// it with dedupe.WrapOutbox, and the binary has no in-process subscriber), so the dedupe
// window needs no lookup before a publish (dedupe.Config.OutboxOnly).
func onlyOutboxRoutes(pc *registry.ProvisionContext) bool {
	if pc.File == nil || len(pc.File.Config.Routes) == 0 {
		return false
	}
	for _, r := range pc.File.Config.Routes {
		if r.Delivery != config.DeliveryOutbox {
			return false
		}
	}
	return true
}

// validateOptions checks the ingress.Options keys.
func (s *HTTPSource) validateOptions() []error {
	var errs []error
	if s.DedupeWindow < 0 {
		errs = append(errs, registry.Field("dedupe_window", "must not be negative"))
	}
	if s.DedupeMaxEntries < 0 {
		errs = append(errs, registry.Field("dedupe_max_entries", "must not be negative"))
	}
	if err := s.GroupCommit.Validate(); err != nil {
		errs = append(errs, registry.Field("group_commit", "%v", err))
	}
	return errs
}
