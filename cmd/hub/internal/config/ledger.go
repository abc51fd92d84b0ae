package config

import (
	"log/slog"

	"github.com/koder/eventhub/ledger"
)

// LedgerConfig is the ledger.Config of this store: dsn is the SQLite path or the
// PostgreSQL DSN (the caller resolves relative paths).
func (s Store) LedgerConfig(dsn string, logger *slog.Logger) LedgerCheck {
	t := s.Ledger
	return LedgerCheck{ledger.Config{DSN: dsn, Schema: s.Schema, FetchCooldown: t.FetchCooldown, FetchPollInterval: t.FetchPollInterval,
		JobTimeout: t.JobTimeout, RescueStuckJobsAfter: t.RescueStuckJobsAfter, RescueInterval: t.RescueInterval,
		CompletedRetention: t.CompletedRetention, DiscardedRetention: t.DiscardedRetention, MaxConns: t.MaxConns, Logger: logger}}
}

// LedgerCheck wraps a ledger.Config so lint can validate it as ledger.Open will.
type LedgerCheck struct{ Config ledger.Config }

// Check runs ledger.Config.Validate on the configuration ledger.Open would use (its
// defaults applied to a copy by WithDefaults).
func (l LedgerCheck) Check() error {
	c := l.Config.WithDefaults()
	return c.Validate()
}
