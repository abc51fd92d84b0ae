package ledger

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"
)

// Defaults. Each is chosen for the hub's workload (short jobs: one send each), not
// River's (long-running background work); see the package doc.
const (
	// DefaultDSN is the embedded default: a SQLite file in the working directory.
	DefaultDSN = "sqlite://eventhub.db"

	// DefaultFetchCooldown is the least time between two fetches of one queue. River's
	// 100 ms caps a queue at 10 batches/s; 5 ms lets a busy queue refill its workers as
	// they free up (measured ~24x the throughput on PostgreSQL) at the cost of up to
	// 200 small indexed queries per second per queue while the queue is busy.
	DefaultFetchCooldown = 5 * time.Millisecond

	// DefaultFetchPollInterval is the fallback fetch period when no insert notification
	// arrives (LISTEN/NOTIFY on PostgreSQL, River's notification table on SQLite). It
	// bounds the delivery latency of jobs whose notification was missed or that became
	// due by schedule; one cheap query per interval per queue when idle.
	DefaultFetchPollInterval = 100 * time.Millisecond

	// DefaultJobTimeout bounds one job (one send). A hub send is a network call with its
	// own timeouts; 30 s is generous and keeps the lease below short.
	DefaultJobTimeout = 30 * time.Second

	// DefaultRescueStuckJobsAfter is the lease (O2): a job running longer than this is
	// taken to belong to a dead process and is made available to others. It must exceed
	// JobTimeout, or live jobs would be rescued while running (a duplicate send). It is
	// the fallback: the jobs of a worker that is provably gone are taken over within
	// seconds by presence (presence.go).
	DefaultRescueStuckJobsAfter = time.Minute

	// DefaultRescueInterval is how often each started Ledger sweeps for stuck jobs, so
	// the lease's takeover bound is RescueStuckJobsAfter + RescueInterval.
	DefaultRescueInterval = 5 * time.Second

	// DefaultCompletedRetention is how long completed jobs are kept. River keeps them
	// 24 h; a hot SKIP LOCKED table full of finished rows slows fetching and vacuum
	// (research: keep the hot table small), and a delivered event needs no record here.
	DefaultCompletedRetention = time.Hour

	// DefaultDiscardedRetention is how long dead (discarded and cancelled) jobs are kept
	// for inspection and resend: River's 7 days.
	DefaultDiscardedRetention = 7 * 24 * time.Hour

	// DefaultMaxConns is the PostgreSQL pool size. Each queue's producer, the completer,
	// the listener and the maintenance services each hold a connection for short
	// periods; 20 keeps many workers fed without crowding the server.
	DefaultMaxConns = 20
	// MinMaxConns is the smallest pool that works: one connection stays with River's
	// LISTEN, and Open migrates on a second while the first holds the migration lock.
	MinMaxConns = 2

	// DefaultBusyTimeout is SQLite's wait for a lock held by another process.
	DefaultBusyTimeout = 10 * time.Second
)

// Presence defaults (see presence.go): how soon a dead process's running jobs are taken
// over without waiting for the lease.
const (
	// DefaultPresenceInterval is how often each started Ledger looks for running jobs
	// whose worker is gone (one indexed query; a presence test only when a foreign
	// worker holds jobs). On PostgreSQL the Ledger also checks its own presence
	// connection at twice this rate.
	DefaultPresenceInterval = time.Second

	// DefaultPresenceGrace (PostgreSQL) is how long a worker's presence lock must stay
	// free before its jobs are taken: the time a live process whose presence session
	// was cut has to notice (by PresenceGrace/2) and cancel its running jobs, so that no
	// job ever runs twice at once. A kill -9 is therefore taken over within about
	// PresenceGrace + PresenceInterval. SQLite needs no grace (see presence.go).
	DefaultPresenceGrace = 3 * time.Second
)

// Config configures a Ledger. The zero value is valid: the embedded SQLite default.
type Config struct {
	// DSN selects the backend: postgres:// or postgresql:// for PostgreSQL; sqlite://path,
	// sqlite:path, file:path or a bare file path for SQLite. Default DefaultDSN.
	DSN string `yaml:"dsn"`

	// Schema is the PostgreSQL schema holding River's tables (created when migrating).
	// It is also the search_path of the ledger's pool, so DB() and Pool() work in it.
	// Empty: the server's search_path. Not used on SQLite.
	Schema string `yaml:"schema"`

	// NoMigrate skips River's migrations at Open, for deployments that run them with
	// River's CLI. Default false: Open migrates (idempotent).
	NoMigrate bool `yaml:"no_migrate"`

	// FetchCooldown: least time between fetches of one queue. Default DefaultFetchCooldown.
	FetchCooldown time.Duration `yaml:"fetch_cooldown"`
	// FetchPollInterval: fallback fetch period. Default DefaultFetchPollInterval.
	FetchPollInterval time.Duration `yaml:"fetch_poll_interval"`
	// JobTimeout: limit of one job run; -1 for none. Default DefaultJobTimeout.
	JobTimeout time.Duration `yaml:"job_timeout"`
	// RescueStuckJobsAfter: the lease (O2); must exceed JobTimeout. Default
	// max(DefaultRescueStuckJobsAfter, 2*JobTimeout).
	RescueStuckJobsAfter time.Duration `yaml:"rescue_stuck_jobs_after"`
	// RescueInterval: period of the stuck-job sweep. Default
	// min(DefaultRescueInterval, RescueStuckJobsAfter).
	RescueInterval time.Duration `yaml:"rescue_interval"`
	// CompletedRetention: how long completed jobs stay. Default DefaultCompletedRetention.
	CompletedRetention time.Duration `yaml:"completed_retention"`
	// DiscardedRetention: how long dead jobs stay. Default DefaultDiscardedRetention.
	DiscardedRetention time.Duration `yaml:"discarded_retention"`
	// MaxConns: PostgreSQL pool size, at least MinMaxConns. Default DefaultMaxConns.
	// SQLite always uses one.
	MaxConns int32 `yaml:"max_conns"`
	// BusyTimeout: SQLite lock wait. Default DefaultBusyTimeout.
	BusyTimeout time.Duration `yaml:"busy_timeout"`

	// PresenceInterval: period of the presence sweep, which takes over the running jobs
	// of workers that are provably gone without waiting for the lease; -1 turns
	// presence off (the lease alone). Default DefaultPresenceInterval.
	PresenceInterval time.Duration `yaml:"presence_interval"`
	// PresenceGrace: PostgreSQL only; how long a worker's presence must stay gone before
	// its jobs are taken; at least 2*PresenceInterval (a grace past the lease is
	// allowed but buys nothing). Default max(DefaultPresenceGrace, 2*PresenceInterval).
	PresenceGrace time.Duration `yaml:"presence_grace"`

	// Logger receives River's and the ledger's logs. Default: slog.Default() from Warn up.
	Logger *slog.Logger `yaml:"-"`
}

var schemaRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,45}$`)

func (c *Config) setDefaults() {
	if c.DSN == "" {
		c.DSN = DefaultDSN
	}
	if c.FetchCooldown == 0 {
		c.FetchCooldown = DefaultFetchCooldown
	}
	if c.FetchPollInterval == 0 {
		c.FetchPollInterval = DefaultFetchPollInterval
	}
	if c.JobTimeout == 0 {
		c.JobTimeout = DefaultJobTimeout
	}
	if c.RescueStuckJobsAfter == 0 {
		c.RescueStuckJobsAfter = max(DefaultRescueStuckJobsAfter, 2*c.JobTimeout)
	}
	if c.RescueInterval == 0 {
		c.RescueInterval = min(DefaultRescueInterval, c.RescueStuckJobsAfter)
	}
	if c.CompletedRetention == 0 {
		c.CompletedRetention = DefaultCompletedRetention
	}
	if c.DiscardedRetention == 0 {
		c.DiscardedRetention = DefaultDiscardedRetention
	}
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.BusyTimeout == 0 {
		c.BusyTimeout = DefaultBusyTimeout
	}
	if c.PresenceInterval == 0 {
		c.PresenceInterval = DefaultPresenceInterval
	}
	if c.PresenceGrace == 0 {
		c.PresenceGrace = max(DefaultPresenceGrace, 2*c.PresenceInterval)
	}
	if c.Logger == nil {
		c.Logger = defaultLogger()
	}
}

// presenceOn reports whether presence is configured (PresenceInterval not -1).
func (c *Config) presenceOn() bool { return c.PresenceInterval > 0 }

// WithDefaults returns the configuration Open would use: c with every unset field
// given its default, on a copy, without opening anything. Tools that check a
// configuration before running (hub lint) validate this, so they never carry a copy
// of the defaults that could drift from the library's.
func (c Config) WithDefaults() Config {
	c.setDefaults()
	return c
}

// Validate reports every invalid field, each error naming its field (joined with
// errors.Join), so a config checker can point at each one.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("ledger: "+format, args...)) }
	if c.Schema != "" && !schemaRE.MatchString(c.Schema) {
		bad("Schema %q: letters, digits and underscores, at most 46 characters", c.Schema)
	}
	if c.FetchCooldown < time.Millisecond {
		bad("FetchCooldown %s: at least 1ms", c.FetchCooldown)
	} else if c.FetchPollInterval < c.FetchCooldown {
		bad("FetchPollInterval %s: not shorter than FetchCooldown %s", c.FetchPollInterval, c.FetchCooldown)
	}
	if c.JobTimeout < -1 {
		bad("JobTimeout %s: positive, or -1 for none", c.JobTimeout)
	} else if c.RescueStuckJobsAfter <= c.JobTimeout {
		bad("RescueStuckJobsAfter %s: must exceed JobTimeout %s", c.RescueStuckJobsAfter, c.JobTimeout)
	}
	if c.RescueInterval <= 0 {
		bad("RescueInterval %s: must be positive", c.RescueInterval)
	}
	if c.CompletedRetention < -1 {
		bad("CompletedRetention %s: positive, or -1 to keep forever", c.CompletedRetention)
	}
	if c.DiscardedRetention < -1 {
		bad("DiscardedRetention %s: positive, or -1 to keep forever", c.DiscardedRetention)
	}
	if c.MaxConns < MinMaxConns {
		bad("MaxConns %d: at least %d (River's listener holds one connection as long as the ledger runs, and opening holds one for the migration lock while migrating on another: with one the hub waits forever)", c.MaxConns, MinMaxConns)
	}
	if c.BusyTimeout < 0 {
		bad("BusyTimeout %s: must not be negative", c.BusyTimeout)
	}
	if c.PresenceInterval != -1 && c.PresenceInterval < 10*time.Millisecond {
		bad("PresenceInterval %s: at least 10ms, or -1 for none", c.PresenceInterval)
	} else if c.presenceOn() && c.PresenceGrace < 2*c.PresenceInterval {
		bad("PresenceGrace %s: at least twice PresenceInterval %s", c.PresenceGrace, c.PresenceInterval)
	}
	if _, _, err := parseDSN(c.DSN); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// QuietLogger returns l without its records below Warn: what the ledger makes of
// slog.Default() when Config.Logger is nil, for callers that pass their own logger.
// River logs routine lifecycle at Info (client started, producer counts every few
// seconds); an operator wants what went wrong.
func QuietLogger(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{slog.LevelWarn, l.Handler()})
}

// Backend is the database under the ledger.
type Backend int

const (
	Postgres Backend = iota + 1
	SQLite
)

func (b Backend) String() string {
	switch b {
	case Postgres:
		return "postgres"
	case SQLite:
		return "sqlite"
	}
	return fmt.Sprintf("Backend(%d)", int(b))
}

// parseDSN returns the backend and, for SQLite, the file path.
func parseDSN(dsn string) (Backend, string, error) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return Postgres, dsn, nil
	case strings.HasPrefix(dsn, "sqlite://"):
		return sqlitePath(strings.TrimPrefix(dsn, "sqlite://"))
	case strings.HasPrefix(dsn, "sqlite:"):
		return sqlitePath(strings.TrimPrefix(dsn, "sqlite:"))
	case strings.HasPrefix(dsn, "file:"):
		return sqlitePath(strings.TrimPrefix(dsn, "file:"))
	case strings.Contains(dsn, "://"):
		return 0, "", fmt.Errorf("ledger: DSN: unknown scheme in %q (postgres://, sqlite:// or a file path)", redact(dsn))
	}
	return sqlitePath(dsn)
}

func sqlitePath(p string) (Backend, string, error) {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return 0, "", fmt.Errorf("ledger: DSN: SQLite parameters are set by the ledger, remove %q", p[i:])
	}
	if p == "" {
		return 0, "", fmt.Errorf("ledger: DSN: empty SQLite path")
	}
	return SQLite, p, nil
}

// redact hides a password in a URL-shaped DSN for errors and logs.
func redact(dsn string) string {
	at := strings.LastIndexByte(dsn, '@')
	scheme := strings.Index(dsn, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return dsn
	}
	userinfo := dsn[scheme+3 : at]
	if i := strings.IndexByte(userinfo, ':'); i >= 0 {
		return dsn[:scheme+3] + userinfo[:i] + ":xxxxx" + dsn[at:]
	}
	return dsn
}
