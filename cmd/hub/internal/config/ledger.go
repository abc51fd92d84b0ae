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

// Check applies the ledger's defaults (mirrored: they are unexported there) to a copy
// and runs ledger.Config.Validate.
func (l LedgerCheck) Check() error {
	c := l.Config
	if c.DSN == "" {
		c.DSN = ledger.DefaultDSN
	}
	if c.FetchCooldown == 0 {
		c.FetchCooldown = ledger.DefaultFetchCooldown
	}
	if c.FetchPollInterval == 0 {
		c.FetchPollInterval = ledger.DefaultFetchPollInterval
	}
	if c.JobTimeout == 0 {
		c.JobTimeout = ledger.DefaultJobTimeout
	}
	if c.RescueStuckJobsAfter == 0 {
		c.RescueStuckJobsAfter = max(ledger.DefaultRescueStuckJobsAfter, 2*c.JobTimeout)
	}
	if c.RescueInterval == 0 {
		c.RescueInterval = min(ledger.DefaultRescueInterval, c.RescueStuckJobsAfter)
	}
	if c.MaxConns == 0 {
		c.MaxConns = ledger.DefaultMaxConns
	}
	return c.Validate()
}
