package outbox

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Defaults.
const (
	// DefaultQueue is the River queue the rows go to.
	DefaultQueue = "outbox"

	// DefaultWorkers is how many rows one relay process sends at once. River fetches
	// as many rows per query as it has free workers, so more workers means fewer, larger
	// fetches: measured here, 1000 workers relayed about twice as fast as 100 on the same
	// database. The cost: a relay that dies holds up to this many rows until the lease
	// frees them (each possibly sent twice, at-least-once), and as many concurrent Sends
	// hit the destinations; lower it for slow destinations.
	DefaultWorkers = 1000

	// DefaultMaxAttempts is the number of sends before a row is dead-lettered. With the
	// default backoff, 20 attempts span about two hours: a transport down for longer
	// than a deploy or a broker restart leaves rows in the dead-letter for resend.
	DefaultMaxAttempts = 20

	// DefaultBackoffBase is the wait after the first failed attempt; each next one
	// doubles (O3) up to DefaultBackoffMax.
	DefaultBackoffBase = time.Second

	// DefaultBackoffMax caps one wait, so a transport that recovers is noticed within
	// ten minutes however long it was down.
	DefaultBackoffMax = 10 * time.Minute

	// DefaultCompletedRetention is how long a relayed row is kept: long enough to look
	// at what just went out, short enough that the rows (one per event and relayed
	// destination) never crowd the ledger's hot table. The ledger's own retention (an
	// hour by default) keeps the webhook deliveries, the history the console lists.
	DefaultCompletedRetention = time.Minute

	// DefaultJitter spreads each wait by ±20 %, so rows that failed together (a broker
	// outage) do not all retry in the same instant when it returns.
	DefaultJitter = 0.2
)

// Config configures an Outbox.
type Config struct {
	// Queue is the River queue of the rows. Default DefaultQueue.
	Queue string `yaml:"queue"`
	// Workers is the number of concurrent sends per relay process. Default DefaultWorkers.
	Workers int `yaml:"workers"`
	// MaxAttempts is the number of sends before a row is dead. Default DefaultMaxAttempts.
	MaxAttempts int `yaml:"max_attempts"`
	// BackoffBase is the first retry wait; it doubles per attempt. Default DefaultBackoffBase.
	BackoffBase time.Duration `yaml:"backoff_base"`
	// BackoffMax caps one wait. Default max(DefaultBackoffMax, BackoffBase).
	BackoffMax time.Duration `yaml:"backoff_max"`
	// Schedule, when set, replaces the doubling: the wait after attempt n is
	// Schedule[n-1], the last entry repeating. Jitter still applies.
	Schedule []time.Duration `yaml:"schedule"`
	// Jitter is the random spread of each wait, 0 to 1 (0.2 = ±20 %). Default
	// DefaultJitter; a negative value disables it.
	Jitter float64 `yaml:"jitter"`
	// RelayAll writes an outbox row for every destination, as before destinations in
	// the ledger's database were written directly (direct.go). Default false: a
	// destination that implements TxSender on this outbox's ledger gets its own
	// records (webhook deliveries) in the enqueue's transaction, with no row to relay.
	RelayAll bool `yaml:"relay_all"`
	// CompletedRetention is how long relayed rows are kept (ledger.RetainCompleted on
	// Queue); -1 leaves them to the ledger's completed_retention. Dead rows keep the
	// ledger's discarded_retention, for resend. Default DefaultCompletedRetention.
	CompletedRetention time.Duration `yaml:"completed_retention"`
}

func (c *Config) setDefaults() {
	if c.Queue == "" {
		c.Queue = DefaultQueue
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = DefaultBackoffBase
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = max(DefaultBackoffMax, c.BackoffBase)
	}
	if c.Jitter == 0 {
		c.Jitter = DefaultJitter
	}
	if c.CompletedRetention == 0 {
		c.CompletedRetention = DefaultCompletedRetention
	}
	if c.Jitter < 0 {
		c.Jitter = 0
	}
}

// WithDefaults returns the configuration New would use: c with every unset field
// given its default, on a copy, without touching the ledger. Tools that check a
// configuration before running (hub lint) validate this, so they never carry a copy
// of the defaults that could drift from the library's.
func (c Config) WithDefaults() Config {
	c.setDefaults()
	return c
}

// Validate reports every invalid field by name, joined with errors.Join.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("outbox: "+format, args...)) }
	if c.Workers < 1 || c.Workers > 10_000 {
		bad("Workers %d: 1 to 10000", c.Workers)
	}
	if c.MaxAttempts < 1 {
		bad("MaxAttempts %d: at least 1", c.MaxAttempts)
	}
	if c.BackoffBase <= 0 {
		bad("BackoffBase %s: must be positive", c.BackoffBase)
	} else if c.BackoffMax < c.BackoffBase {
		bad("BackoffMax %s: not below BackoffBase %s", c.BackoffMax, c.BackoffBase)
	}
	if c.Jitter > 1 {
		bad("Jitter %g: at most 1", c.Jitter)
	}
	for i, d := range c.Schedule {
		if d <= 0 {
			bad("Schedule[%d] %s: must be positive", i, d)
		}
	}
	if c.CompletedRetention != -1 && c.CompletedRetention < time.Second {
		bad("CompletedRetention %s: at least 1s, or -1 for the ledger's", c.CompletedRetention)
	}
	return errors.Join(errs...)
}

// Backoff returns the wait after failed attempt n (1-based): exponential from
// BackoffBase, capped at BackoffMax (or the Schedule), spread by Jitter.
func (c *Config) Backoff(attempt int) time.Duration {
	attempt = max(attempt, 1)
	var d time.Duration
	if len(c.Schedule) > 0 {
		d = c.Schedule[min(attempt, len(c.Schedule))-1]
	} else {
		d = c.BackoffMax
		if shift := attempt - 1; shift < 62 && c.BackoffBase<<shift > 0 && c.BackoffBase<<shift < c.BackoffMax {
			d = c.BackoffBase << shift
		}
	}
	if c.Jitter > 0 {
		d = time.Duration(float64(d) * (1 + c.Jitter*(2*rand.Float64()-1)))
	}
	return d
}
