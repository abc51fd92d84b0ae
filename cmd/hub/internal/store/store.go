// Package store owns what a hub process opens on its config's SQL store: the River
// ledger (webhook deliveries and outbox rows), the kdbstream engine, and the access
// layer's stores (API keys, the audit trail; access.go), on the same SQLite file or
// PostgreSQL database, plus the key ring that encrypts secrets in it. One Store per
// process is their only owner: it opens each on first use, starts the ledger once every module registered its workers
// and queues, stops it before the transports close, and closes both after every
// module. Modules reach them through registry.Runtime (rt.Ledger, rt.KDB).
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// ErrNone is returned by modules that need a store when the config has none.
var ErrNone = errors.New("needs a store: set store.sqlite (a file path) or store.postgres (a DSN)")

// Store is the process's store-backed resources. The zero value is not usable; build
// one with New. Its methods are safe for concurrent use.
type Store struct {
	cfg    config.Store
	file   *config.File
	env    config.Lookup
	logger *slog.Logger

	mu     sync.Mutex
	ledger *ledger.Ledger
	kdb    *engine.Engine
	access access // access.go
}

// New returns the resources of cfg; nothing is opened yet. f resolves a relative
// SQLite path against the config file (nil: the working directory) and gives the auth
// and secrets sections (access.go); env is where HUB_SECRET_KEY is read (nil: none).
func New(cfg config.Store, f *config.File, env config.Lookup, logger *slog.Logger) *Store {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	return &Store{cfg: cfg, file: f, env: env, logger: logger}
}

// Ledger returns the River ledger, opening (and migrating) it the first time. Modules
// register their workers and queues on it while they open; Start starts it after.
func (s *Store) Ledger(ctx context.Context) (*ledger.Ledger, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ledger != nil {
		return s.ledger, nil
	}
	dsn, err := s.dsn()
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	// River's own records (producer counts, migrations) are plumbing at info; the
	// webhook and outbox log what matters. Warnings and errors pass.
	l, err := ledger.Open(ctx, s.cfg.LedgerConfig(dsn, ledger.QuietLogger(s.logger)))
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	s.ledger = l
	return l, nil
}

// KDB returns the kdbstream engine, opening it the first time.
func (s *Store) KDB(ctx context.Context) (*engine.Engine, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kdb != nil {
		return s.kdb, nil
	}
	if !s.cfg.Configured() {
		return nil, fmt.Errorf("open kdbstream: %w", ErrNone)
	}
	cfg := engine.Config{Driver: engine.DriverPostgres, DSN: s.cfg.Postgres, Schema: s.cfg.Schema}
	if s.cfg.SQLite != "" {
		p, err := s.streamsPath(ctx)
		if err != nil {
			return nil, fmt.Errorf("open kdbstream: %w", err)
		}
		cfg = engine.Config{Driver: engine.DriverSQLite, DSN: p}
		// Streams in the ledger's own file share its connection: one writer for the
		// file instead of two contending for its lock, and the outbox can append the
		// entries in its enqueue transaction (kdbstream.Transport.SendTx). The ledger
		// is open by now whenever the config uses it (app.Start opens it first).
		if main, _ := s.sqlitePath(); p == main && s.ledger != nil {
			cfg.DB = s.ledger.DB()
		}
	}
	e, err := engine.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open kdbstream: %w", err)
	}
	s.kdb = e
	return e, nil
}

// SharedLedger returns the ledger when the kdbstream engine's tables are in its
// database, so the outbox can append in its own transactions: KDB on the ledger's
// SQLite file (one connection), or both on the store's PostgreSQL schema. Else nil.
func (s *Store) SharedLedger() *ledger.Ledger {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kdb == nil || s.ledger == nil {
		return nil
	}
	if s.kdb.SharesDB(s.ledger.DB()) || (s.kdb.Postgres() && s.ledger.Backend() == ledger.Postgres) {
		return s.ledger
	}
	return nil
}

// Start starts the ledger, if a module opened it: River builds its client from the
// workers and queues registered by then, so the app calls Start once every module is
// open.
func (s *Store) Start(ctx context.Context) error {
	if l := s.openedLedger(); l != nil {
		if err := l.Start(ctx); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	return nil
}

// Stop stops the ledger's work: running jobs finish (or are cancelled at ctx's
// deadline and retried after a restart); queued ones stay in the database. Safe
// before Start and idempotent.
func (s *Store) Stop(ctx context.Context) error {
	if l := s.openedLedger(); l != nil {
		if err := l.Stop(ctx); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	return nil
}

// Close closes what was opened, after every module closed. Idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	l, e := s.ledger, s.kdb
	s.ledger, s.kdb = nil, nil
	s.mu.Unlock()
	var errs []error
	if e != nil {
		if err := e.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close kdbstream: %w", err))
		}
	}
	if l != nil {
		if err := l.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close ledger: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (s *Store) openedLedger() *ledger.Ledger {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ledger
}

// dsn is the ledger's database: the SQLite file or the PostgreSQL DSN.
func (s *Store) dsn() (string, error) {
	switch {
	case s.cfg.SQLite != "":
		return s.sqlitePath()
	case s.cfg.Postgres != "":
		return s.cfg.Postgres, nil
	}
	return "", ErrNone
}

// sqlitePath is the SQLite file resolved against the config file, with its directory
// created.
func (s *Store) sqlitePath() (string, error) {
	p := s.cfg.SQLite
	if s.file != nil {
		p = s.file.Resolve(p)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	return p, nil
}
