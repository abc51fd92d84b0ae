package dedupe

import (
	"fmt"
	"log/slog"
	"regexp"
	"time"
)

// Defaults of Config.
const (
	// DefaultTable is the table of the window, in the ledger's database (and schema).
	DefaultTable = "hub_event_ids"
	// DefaultPruneInterval spaces out the deletion of expired records.
	DefaultPruneInterval = 10 * time.Minute
	// DefaultPruneBatch bounds the rows one delete statement removes.
	DefaultPruneBatch = 5000
)

// Config configures a Store. The window's length is Admit's ttl (the ingress's
// dedupe_window), not a field here: several intakes may share one table.
type Config struct {
	// Table is the window's table. Default hub_event_ids.
	Table string `yaml:"table"`
	// PruneInterval spaces out the deletion of expired records; negative disables the
	// background prune (call Prune yourself). Default 10m.
	PruneInterval time.Duration `yaml:"prune_interval"`
	// PruneBatch bounds the rows one delete statement removes. Default 5000.
	PruneBatch int `yaml:"prune_batch"`
	// OutboxOnly is the caller's promise that every event it admits is published only to
	// outbox routes whose outbox is WrapOutbox on this Store's ledger, or to no route at
	// all (no direct route, no in-process subscriber). Admit then skips its lookup: the
	// rows' transaction finds a repeat by itself (its upsert records fewer ids than it
	// was given, it rolls back, and Admit looks the batch up and judges it), so a new
	// event costs one statement per batch instead of two. An event that matches no route
	// is then answered as admitted even when it repeats one (nothing was delivered).
	// Default false: Admit looks up first, which is exact for any route.
	OutboxOnly bool `yaml:"-"`
	// Logger receives prune errors and records that could not be written after a
	// successful publish. Default slog.Default().
	Logger *slog.Logger `yaml:"-"`
}

var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func (c *Config) setDefaults() {
	if c.Table == "" {
		c.Table = DefaultTable
	}
	if c.PruneInterval == 0 {
		c.PruneInterval = DefaultPruneInterval
	}
	if c.PruneBatch == 0 {
		c.PruneBatch = DefaultPruneBatch
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate names the first invalid field.
func (c *Config) Validate() error {
	if !tableName.MatchString(c.Table) {
		return fmt.Errorf("dedupe: Table %q: want ^[a-z_][a-z0-9_]{0,62}$", c.Table)
	}
	if c.PruneBatch < 1 {
		return fmt.Errorf("dedupe: PruneBatch %d: at least 1", c.PruneBatch)
	}
	return nil
}
