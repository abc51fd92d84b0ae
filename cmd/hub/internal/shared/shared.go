// Package shared opens the resources several modules use on the config's store, once
// per process: the River ledger (webhook deliveries, the outbox) and, when its module
// lands, the kdbstream engine. Each is kept in the registry.Runtime and closed after
// every module.
package shared

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// Keys of the shared resources.
const (
	KeyLedger = "ledger"
	KeyKDB    = "kdbstream"
)

// HasStore reports whether the config names a store.
func HasStore(s config.Store) bool { return s.SQLite != "" || s.Postgres != "" }

// ErrNoStore is returned by modules that need a store when the config has none.
var ErrNoStore = fmt.Errorf("needs a store: set store.sqlite (a file path) or store.postgres (a DSN)")

// SQLitePath returns the store's SQLite file, resolved against the config file, with its
// directory created.
func SQLitePath(rt *registry.Runtime) (string, error) {
	p := rt.Store.SQLite
	if rt.File != nil {
		p = rt.File.Resolve(p)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	return p, nil
}

// Ledger returns the process's River ledger on the store, opening (and migrating) it
// the first time. The app starts it once every module registered its workers.
func Ledger(ctx context.Context, rt *registry.Runtime) (*ledger.Ledger, error) {
	v, err := rt.Shared(KeyLedger, func() (any, io.Closer, error) {
		if !HasStore(rt.Store) {
			return nil, nil, ErrNoStore
		}
		cfg := rt.Store.LedgerConfig(rt.Store.Postgres, quiet(rt.Logger)).Config
		if rt.Store.SQLite != "" {
			p, err := SQLitePath(rt)
			if err != nil {
				return nil, nil, err
			}
			cfg.DSN = p
		}
		l, err := ledger.Open(ctx, cfg)
		if err != nil {
			return nil, nil, err
		}
		return l, l, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*ledger.Ledger), nil
}

// OpenedLedger returns the ledger if a module opened it.
func OpenedLedger(rt *registry.Runtime) *ledger.Ledger {
	v, ok := rt.Lookup(KeyLedger)
	if !ok {
		return nil
	}
	return v.(*ledger.Ledger)
}

// quiet keeps River's own records (producer counts, migrations, retries) out of the
// hub's log at info: they are plumbing, and the webhook and outbox log what matters.
// Warnings and errors pass.
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{l.Handler(), slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= m.min && m.Handler.Enabled(ctx, lv)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(as), m.min}
}
func (m minLevel) WithGroup(g string) slog.Handler { return minLevel{m.Handler.WithGroup(g), m.min} }

// KDB returns the kdbstream engine on the config's store (the same SQLite file or
// PostgreSQL database as the ledger), opening it the first time.
func KDB(ctx context.Context, rt *registry.Runtime) (*engine.Engine, error) {
	v, err := rt.Shared(KeyKDB, func() (any, io.Closer, error) {
		if !HasStore(rt.Store) {
			return nil, nil, ErrNoStore
		}
		cfg := engine.Config{Driver: engine.DriverPostgres, DSN: rt.Store.Postgres, Schema: rt.Store.Schema}
		if rt.Store.SQLite != "" {
			p, err := SQLitePath(rt)
			if err != nil {
				return nil, nil, err
			}
			cfg = engine.Config{Driver: engine.DriverSQLite, DSN: p}
		}
		e, err := engine.Open(ctx, cfg)
		if err != nil {
			return nil, nil, err
		}
		return e, e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*engine.Engine), nil
}
