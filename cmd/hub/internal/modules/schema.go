package modules

import (
	"context"
	"errors"
	"fmt"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/cmd/hub/internal/store"
	"github.com/koder/eventhub/dedupe"
	"github.com/koder/eventhub/internal/schemaver"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	"github.com/koder/eventhub/transports/webhook"
)

// The modules with tables of their own: each MigrateSchema runs the DDL its Open or
// Start would run, and nothing else (`hub migrate schema`).

// MigrateSchema creates the webhook transport's tables and indexes on the store's
// database and waits for the indexes' builds.
func (m *WebhookTransport) MigrateSchema(ctx context.Context, rt *registry.Runtime) error {
	l, err := rt.Ledger(ctx)
	if err != nil {
		return err
	}
	return webhook.MigrateSchema(ctx, l)
}

// MigrateSchema creates the stream tables in the transport's database.
func (m *KDBTransport) MigrateSchema(ctx context.Context, rt *registry.Runtime) error {
	return migrateKDB(ctx, rt, m.URL, false)
}

// MigrateSchema creates the stream tables in the source's database, and the processed
// keys' table when the source records them.
func (m *KDBSource) MigrateSchema(ctx context.Context, rt *registry.Runtime) error {
	return migrateKDB(ctx, rt, m.URL, m.Idempotency == nil || *m.Idempotency)
}

// migrateKDB opens the engine of url (closed after), or the store's (the app closes it),
// which creates its tables, then the idempotency table when asked.
func migrateKDB(ctx context.Context, rt *registry.Runtime, url string, idempotency bool) error {
	if url != "" && schemaver.Checking(ctx) != nil {
		// A check run creates nothing, and opening a SQLite file would make it; SQLite
		// keeps no record anyway (every start runs its DDL).
		if ec, _, err := kdbstream.ParseURL(url, kdbstream.Config{}); err != nil || ec.Driver != engine.DriverPostgres {
			return err
		}
	}
	if url != "" {
		eng, err := kdbstream.OpenEngine(ctx, url)
		if err != nil {
			return err
		}
		defer eng.Close()
		if idempotency {
			_, err = kdbstream.NewIdempotencyStore(ctx, eng, "")
		}
		return err
	}
	eng, err := rt.KDB(ctx)
	if err == nil && idempotency {
		_, err = kdbstream.NewIdempotencyStore(ctx, eng, "")
	}
	return err
}

// MigrateSchema creates the ingress's table of accepted event ids (R5) on the store's
// database; without a store, or with no_dedupe, the ingress has none.
func (s *HTTPSource) MigrateSchema(ctx context.Context, rt *registry.Runtime) error {
	if s.NoDedupe {
		return nil
	}
	l, err := rt.Ledger(ctx)
	if errors.Is(err, store.ErrNone) {
		return nil
	}
	if err != nil {
		return err
	}
	d, err := dedupe.Open(ctx, l, dedupe.Config{OutboxOnly: s.outboxOnly, Logger: rt.Logger})
	if err != nil {
		return fmt.Errorf("ingress: dedupe: %w", err)
	}
	return d.Close()
}

var (
	_ registry.SchemaMigrator = (*WebhookTransport)(nil)
	_ registry.SchemaMigrator = (*KDBTransport)(nil)
	_ registry.SchemaMigrator = (*KDBSource)(nil)
	_ registry.SchemaMigrator = (*HTTPSource)(nil)
)
