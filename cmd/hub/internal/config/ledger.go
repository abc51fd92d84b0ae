package config

import (
	"log/slog"

	"github.com/koder/eventhub/ledger"
)

// Configured reports whether the config names a store.
func (s Store) Configured() bool { return s.SQLite != "" || s.Postgres != "" }

// LedgerConfig is the ledger.Config of this store: the ledger section with dsn (the
// SQLite path or the PostgreSQL DSN; the caller resolves relative paths), the store's
// schema and logger.
func (s Store) LedgerConfig(dsn string, logger *slog.Logger) ledger.Config {
	c := s.Ledger
	c.DSN, c.Schema, c.Logger = dsn, s.Schema, logger
	return c
}
