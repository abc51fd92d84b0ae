package app

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/cmd/hub/internal/store"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/schemaver"
)

// MigrateSchema runs the DDL every part of the plan would run at start and starts
// nothing (`hub migrate schema`): in the store's database River's migrations, the
// streams' tables and the access layer's (API keys, console sessions, audit trail,
// revoked links), all of which a running hub may use whatever its config; then each
// module's own (registry.SchemaMigrator: the webhook transport's tables and indexes,
// kdbstream databases named by URL, the ingress's table of accepted ids). Every set is
// recorded with its digest (internal/schemaver), so `hub run` as a role that may only
// read and write rows finds it in place and runs no DDL. What a start only warns about
// fails it (an index this role may not build, a build that failed); with o.Force every
// set runs even when recorded, which repairs objects dropped behind the record's back.
// It returns what it changed; with o.Check nothing runs and what is not at this
// version is returned instead (on PostgreSQL; SQLite's DDL runs at every start). done
// is called after each step with its name.
func MigrateSchema(ctx context.Context, p *Plan, o MigrateOptions, done func(step string)) (r MigrateResult, err error) {
	var check *schemaver.Pending
	if o.Check {
		check = &schemaver.Pending{}
		ctx = schemaver.AsCheck(ctx, check)
	}
	ctx = schemaver.AsMigration(ctx, o.Force)
	defer func() {
		r.Applied = schemaver.AppliedIn(ctx)
		if check != nil {
			r.Pending = check.Items()
		}
	}()
	cfg := &p.File.Config
	st := store.New(cfg.Store, p.File, p.Env, p.Logger)
	defer func() {
		if cerr := st.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	reg := prometheus.NewRegistry()
	rt := &registry.Runtime{Logger: p.Logger, Registry: reg, Schemas: p.Schemas, Store: st,
		StreamMetrics: hub.NewStreamMetrics(reg)}
	if cfg.Store.Configured() {
		for _, s := range []struct {
			name string
			open func(context.Context) error
		}{
			{"store: ledger (River's migrations)", func(ctx context.Context) error { _, err := st.Ledger(ctx); return err }},
			{"store: streams", func(ctx context.Context) error { _, err := st.KDB(ctx); return err }},
			{"store: API keys", func(ctx context.Context) error { _, err := st.Keys(ctx); return err }},
			{"store: console sessions", func(ctx context.Context) error { _, err := st.Sessions(ctx); return err }},
			{"store: audit trail", func(ctx context.Context) error { _, err := st.Audit(ctx); return err }},
			{"store: revoked links", func(ctx context.Context) error { _, err := st.LinkRevocations(ctx); return err }},
		} {
			if err := s.open(ctx); err != nil {
				return r, fmt.Errorf("%s: %w", s.name, err)
			}
			done(s.name)
		}
	}
	for _, s := range p.Transports {
		if m, ok := s.Module.(registry.SchemaMigrator); ok {
			if err := m.MigrateSchema(ctx, rt); err != nil {
				return r, fmt.Errorf("transports.%s (%s): %w", s.Name, s.ID, err)
			}
			done("transports." + s.Name)
		}
	}
	for _, s := range p.Sources {
		if m, ok := s.Module.(registry.SchemaMigrator); ok {
			if err := m.MigrateSchema(ctx, rt); err != nil {
				return r, fmt.Errorf("sources.%s (%s): %w", s.Name, s.ID, err)
			}
			done("sources." + s.Name)
		}
	}
	return r, nil
}

// MigrateResult is what a migration run changed, or what a check run found pending.
type MigrateResult struct {
	Applied []string // each change made: "DDL webhook.tables", "River's migrations 1, 2", "index …", "column …"
	Pending []string // with Check: what is not at this version
}

// MigrateOptions are `hub migrate schema`'s flags.
type MigrateOptions struct {
	Force bool // run every set even when its version is recorded
	Check bool // run nothing; report what is not at this version
}
