// Package engine is a stream store with Redis Streams semantics on SQL: one SQLite file
// (pure Go, WAL) as the zero-setup default, or PostgreSQL when several processes share
// streams. It implements the command subset the hub uses (XADD, XGROUP CREATE,
// XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XDEL, XTRIM, XLEN, XRANGE, XINFO) with
// Redis 7.0's replies, and the Backend interface of internal/streams so the shared R4
// consumer loop runs on it.
//
// Every command is one SQL transaction that first locks the stream's row (SELECT ... FOR
// UPDATE on PostgreSQL; SQLite has one writer connection), so commands on a stream are
// serialised exactly as Redis's single thread serialises them, across processes too on
// PostgreSQL. Appends go through a committer goroutine that coalesces concurrent XADDs
// into one transaction (group commit): one fsync covers many publishers.
package engine

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/koder/eventhub/hub"
)

// Drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Defaults.
const (
	DefaultSynchronous  = "FULL"
	DefaultMaxBatch     = 10000
	DefaultPollInterval = time.Second
	DefaultSchema       = "public"
	DefaultBusyTimeout  = 10 * time.Second
)

// Config configures an Engine.
type Config struct {
	// Driver is "sqlite" or "postgres".
	Driver string `yaml:"driver"`
	// DSN is the SQLite file path or the PostgreSQL URL.
	DSN string `yaml:"dsn"`
	// Schema is the PostgreSQL schema holding the tables (created if missing); default
	// "public". Ignored for SQLite.
	Schema string `yaml:"schema"`
	// Synchronous is SQLite's synchronous pragma in WAL mode: "FULL" (default: every
	// acknowledged commit is fsynced, it survives power loss) or "NORMAL" (the WAL is
	// fsynced at checkpoints only: a commit survives a process crash such as kill -9,
	// the last commits may be lost on power loss); "EXTRA" and "OFF" are accepted too.
	Synchronous string `yaml:"synchronous"`
	// MaxBatch: the committer stops adding requests to a group-commit transaction once
	// it holds this many entries (the last request may take it past; one request is
	// never split); default 10000.
	MaxBatch int `yaml:"max_batch"`
	// PollInterval is how long PostgreSQL's LISTEN connection waits before it
	// reconnects after losing the server; default 1s. Blocked reads do not poll: the
	// listener wakes them all once each time it is listening again (NOTIFYs sent while
	// it was down are lost), so a lost connection costs them latency, not entries.
	PollInterval time.Duration `yaml:"poll_interval"`
	// Lazy lets Open succeed while the database is unreachable: the connection and
	// the tables are then set up by the first command, and commands fail with
	// Unavailable until that works (as the Redis transport's Open does not fail while
	// Redis is down). Default false: Open reports the problem at once.
	Lazy bool `yaml:"lazy"`
	// Now is the clock (ms ids, idle times); tests replace it. Default time.Now.
	Now func() time.Time `yaml:"-"`
	// DB, on SQLite, is a handle to use instead of opening DSN: the ledger's, when the
	// streams live in its file, so the stream and the ledger write through one
	// connection (no lock contention between two writers of one file) and an append
	// can join a ledger transaction (AppendTx). It must be a WAL handle with one
	// connection; its synchronous setting is kept (Synchronous is ignored) and Close
	// leaves it open. DSN may then be empty.
	DB *sql.DB `yaml:"-"`
}

func (c *Config) setDefaults() {
	if c.Schema == "" {
		c.Schema = DefaultSchema
	}
	if c.Synchronous == "" {
		c.Synchronous = DefaultSynchronous
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate checks the configuration and names the offending field.
func (c *Config) Validate() error {
	switch c.Driver {
	case DriverSQLite, DriverPostgres:
	default:
		return hub.Errorf(hub.InvalidArgument, "kdbstream: Driver %q: want sqlite or postgres", c.Driver)
	}
	if c.DB != nil && c.Driver != DriverSQLite {
		return hub.Errorf(hub.InvalidArgument, "kdbstream: a shared DB handle is for SQLite only")
	}
	if c.DSN == "" && c.DB == nil {
		return hub.Errorf(hub.InvalidArgument, "kdbstream: DSN is empty")
	}
	switch strings.ToUpper(c.Synchronous) {
	case "FULL", "NORMAL", "EXTRA", "OFF":
	default:
		return hub.Errorf(hub.InvalidArgument, "kdbstream: Synchronous %q: want FULL or NORMAL", c.Synchronous)
	}
	for _, r := range c.Schema {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return hub.Errorf(hub.InvalidArgument, "kdbstream: Schema %q: letters, digits and _ only", c.Schema)
		}
	}
	return nil
}

// Engine is the stream store. It is safe for concurrent use.
type Engine struct {
	cfg     Config
	runIDs  int     // the most ids in one pending run: maxRunIDs (tests make it smaller)
	d       dialect // everything that differs per database (dialect.go)
	db      *sql.DB // from d.open, valid once ready
	waiters *waiters
	appends chan *appendReq
	done    chan struct{}
	wg      sync.WaitGroup
	closeMu sync.RWMutex
	closed  bool

	readyMu sync.Mutex
	ready   bool

	selectStreamQ string       // selectStreamSQL with the dialect's row lock
	noWaitStreamQ string       // the same, failing at once on a row another transaction holds (PostgreSQL)
	fullReads     sync.Map     // stream\x00group\x00consumer whose last ">" read filled COUNT
	keySets       atomic.Int64 // SETs so far (keys.go sweeps expired strings every sweepKeysEvery)
	lockRetries   atomic.Int64 // committer batches tried again after a NOWAIT lock found a stream held
	lockRetryFor  atomic.Int64 // nanoseconds of NOWAIT retries before waiting for every lock (lockorder.go)
	cursors       scanCursors  // SCAN's cursors (scan.go)
}

// Open connects, creates the tables if needed and starts the committer.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, runIDs: maxRunIDs, waiters: newWaiters(), appends: make(chan *appendReq, 1024), done: make(chan struct{})}
	e.d = dialects[cfg.Driver](cfg, e.waiters)
	e.selectStreamQ = selectStreamSQL + e.d.lockRow()
	e.noWaitStreamQ = e.selectStreamQ
	if e.Postgres() {
		e.noWaitStreamQ += " NOWAIT"
	}
	if err := e.ensureReady(ctx); err != nil && !cfg.Lazy {
		return nil, err
	}
	e.wg.Add(1)
	go e.committer()
	return e, nil
}

// ensureReady connects and creates the tables once.
func (e *Engine) ensureReady(ctx context.Context) error {
	e.readyMu.Lock()
	defer e.readyMu.Unlock()
	if e.ready {
		return nil
	}
	db, err := e.d.open(ctx)
	if err != nil {
		return err
	}
	e.db, e.ready = db, true
	return nil
}

// Close stops the committer (pending appends finish first) and closes the database.
func (e *Engine) Close() error {
	e.closeMu.Lock()
	if e.closed {
		e.closeMu.Unlock()
		return nil
	}
	e.closed = true
	close(e.done)
	e.closeMu.Unlock()
	e.wg.Wait()
	e.readyMu.Lock()
	defer e.readyMu.Unlock()
	e.d.close()
	e.waiters.wakeAll()
	if !e.ready || e.cfg.DB != nil {
		return nil
	}
	return e.db.Close()
}

// Ready connects and creates the tables if that has not happened yet (see Lazy).
func (e *Engine) Ready(ctx context.Context) error { return e.ensureReady(ctx) }

// DB exposes the database handle, valid once Ready returned nil (the idempotency store
// and the migration checkpoints live in the same database).
func (e *Engine) DB() *sql.DB { return e.db }

// SharesDB reports whether the engine runs on db as its shared handle (Config.DB),
// so that AppendTx can take db's transactions.
func (e *Engine) SharesDB(db *sql.DB) bool { return db != nil && e.cfg.DB == db }

// Postgres reports whether the engine runs on PostgreSQL.
func (e *Engine) Postgres() bool { return e.d.driver() == DriverPostgres }

// Rebind rewrites '?' placeholders for the engine's database ($n on PostgreSQL).
func (e *Engine) Rebind(q string) string { return e.d.rebind(q) }

func (e *Engine) nowMs() int64 { return e.cfg.Now().UnixMilli() }

// inTx runs fn in one durable transaction, committing on nil.
func (e *Engine) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return e.inTxMode(ctx, false, fn)
}

// inTxRelaxed runs consumer bookkeeping (XREADGROUP's pending entries, XACK, claims)
// without waiting for the disk flush (the dialect's begin: PostgreSQL commits it with
// synchronous_commit off, SQLite with synchronous NORMAL). A crash of the machine (not
// of the process) can lose the last such commits; the entries involved are then
// delivered again, which at-least-once delivery allows. Appends never take this path.
func (e *Engine) inTxRelaxed(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return e.inTxMode(ctx, true, fn)
}

func (e *Engine) inTxMode(ctx context.Context, relaxed bool, fn func(tx *sql.Tx) error) error {
	if e.isClosed() {
		return errClosed
	}
	return e.inTxRaw(ctx, relaxed, fn)
}

// isClosed reports whether Close has begun.
func (e *Engine) isClosed() bool {
	e.closeMu.RLock()
	defer e.closeMu.RUnlock()
	return e.closed
}

// inTxRaw is inTxMode without the closed check (the committer drains after Close).
func (e *Engine) inTxRaw(ctx context.Context, relaxed bool, fn func(tx *sql.Tx) error) error {
	if err := e.ensureReady(ctx); err != nil {
		return err
	}
	tx, err := e.d.begin(ctx, relaxed)
	if err != nil {
		return classify(err)
	}
	err = fn(tx)
	if err != nil {
		_ = tx.Rollback()
	} else {
		err = tx.Commit()
	}
	e.d.end(ctx)
	return classify(err)
}

// The per-statement helpers of the command code: the dialect resolves the statement,
// the engine runs it (the arguments stay on the caller's stack).

func (e *Engine) exec(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	st, err := e.d.stmt(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	return st.exec(ctx, tx, args...)
}

func (e *Engine) query(ctx context.Context, tx *sql.Tx, q string, args ...any) (*sql.Rows, error) {
	st, err := e.d.stmt(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	return st.query(ctx, tx, args...)
}

func (e *Engine) queryRow(ctx context.Context, tx *sql.Tx, q string, args ...any) row {
	st, err := e.d.stmt(ctx, tx, q)
	if err != nil {
		return row{err: err}
	}
	return row{r: st.queryRow(ctx, tx, args...)}
}

// classify maps database errors to hub codes; command errors pass unchanged.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return hub.Wrap(dbCode(err), err)
}
