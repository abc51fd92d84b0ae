package ledger

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/hub"
)

// Ledger is River on one database: its workers, queues and the client that works them.
// It is safe for concurrent use.
type Ledger struct {
	cfg     Config
	backend Backend
	pool    *pgxpool.Pool // PostgreSQL only
	db      *sql.DB       // both: stdlib over pool on PostgreSQL, the file on SQLite
	workers *river.Workers
	exec    riverdriver.Executor // for the lease sweep
	reindex []string             // PostgreSQL: River's reindexer's indexes (reindexable)

	// Insert-only clients, usable from Open on. River's client is generic over the
	// transaction type, so PostgreSQL has two (pgx.Tx and *sql.Tx); SQLite has sqlDB.
	pgInsert  *river.Client[pgx.Tx]
	sqlInsert *river.Client[*sql.Tx]

	presence presenceBackend // nil: presence off, or unsupported (lease only)

	mu       sync.Mutex
	queues   map[string]river.QueueConfig
	retain   map[string]time.Duration // queue -> completed retention (retention.go)
	started  bool                     // between Start and Stop
	work     *incarnation             // the working client; nil when not started or fenced
	loopStop context.CancelFunc       // stops the maintenance loop (sweeps, fencing)
	loopDone chan struct{}
	fencing  sync.WaitGroup // presence watchers (lifecycle.go)
	closed   bool

	onStop  []func()       // OnStop's (lifecycle.go)
	onFence []func(string) // OnFence's (lifecycle.go)

	hooks commitHooks   // AfterCommit's callbacks of InTx's open transactions (tx.go)
	wake  *sqliteDriver // SQLite: the working clients' driver (sqlite_driver.go)

	// Index builds running after EnsureIndexes returned (index.go), cancelled and
	// waited for by Close.
	builds       sync.WaitGroup
	buildCtx     context.Context
	cancelBuilds context.CancelFunc
}

// client is the part of *river.Client that does not mention the transaction type.
type client interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	JobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	JobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobDelete(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobDeleteMany(ctx context.Context, params *river.JobDeleteManyParams) (*river.JobDeleteManyResult, error)
	Queues() *river.QueueBundle
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
}

// Open opens the database, runs River's migrations unless cfg.NoMigrate, and returns
// an insert-capable Ledger. Register workers and queues, then Start to work jobs.
func Open(ctx context.Context, cfg Config) (*Ledger, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, hub.Wrap(hub.InvalidArgument, err)
	}
	backend, target, _ := parseDSN(cfg.DSN)
	l := &Ledger{cfg: cfg, backend: backend, workers: river.NewWorkers(), queues: map[string]river.QueueConfig{}}
	// Not ctx's values: a migration run's mark (internal/schemaver) must not outlive it
	// in the builds of a ledger that goes on running.
	l.buildCtx, l.cancelBuilds = context.WithCancel(context.Background())
	var err error
	switch backend {
	case Postgres:
		err = l.openPostgres(ctx, target)
	case SQLite:
		err = l.openSQLite(ctx, target)
	}
	if err != nil {
		l.cancelBuilds()
		return nil, errors.Join(err, l.closeDB())
	}
	return l, nil
}

func (l *Ledger) openPostgres(ctx context.Context, dsn string) error {
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return hub.Errorf(hub.InvalidArgument, "ledger: DSN %s: %v", redact(dsn), err)
	}
	pcfg.MaxConns = l.cfg.MaxConns
	if l.cfg.Schema != "" {
		pcfg.ConnConfig.RuntimeParams["search_path"] = l.cfg.Schema
	}
	if l.pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		return hub.Errorf(hub.Unavailable, "ledger: open %s: %w", redact(dsn), err)
	}
	if err := l.pool.Ping(ctx); err != nil {
		return hub.Errorf(hub.Unavailable, "ledger: connect %s: %w", redact(dsn), err)
	}
	l.db = openDBFromPool(l.pool)
	driver := riverpgxv5.New(l.pool)
	l.exec = driver.GetExecutor()
	if !l.cfg.NoMigrate {
		if err := migratePostgres(ctx, l.pool, driver, l.cfg); err != nil {
			return err
		}
	}
	if l.reindex, err = reindexable(ctx, l.pool, l.cfg.Schema); err != nil {
		return err
	}
	if l.pgInsert, err = river.NewClient(driver, l.insertConfig()); err != nil {
		return hub.Wrap(hub.Internal, err)
	}
	if l.sqlInsert, err = river.NewClient(riverdatabasesql.New(l.db), l.insertConfig()); err != nil {
		return hub.Wrap(hub.Internal, err)
	}
	if l.cfg.presenceOn() {
		l.presence = newPGPresence(l.pool, l.cfg)
	}
	return nil
}

func (l *Ledger) openSQLite(ctx context.Context, path string) error {
	var err error
	if l.db, err = openSQLiteDB(ctx, path, l.cfg.BusyTimeout); err != nil {
		return err
	}
	driver := riversqlite.New(l.db)
	l.wake = newSQLiteDriver(l.db, driver)
	l.exec = driver.GetExecutor()
	if !l.cfg.NoMigrate {
		if err := migrateSQLite(ctx, driver, l.cfg); err != nil {
			return err
		}
	}
	if l.sqlInsert, err = river.NewClient(driver, l.insertConfig()); err != nil {
		return hub.Wrap(hub.Internal, err)
	}
	if l.cfg.presenceOn() {
		fp, err := newFilePresence(path, l.cfg.Logger)
		if err != nil {
			return hub.Wrap(hub.InvalidArgument, err)
		}
		if fp != nil {
			l.presence = fp
		}
	}
	return nil
}

// insertConfig is the configuration of the insert-only clients. SkipUnknownJobCheck:
// a publishing process may insert kinds whose workers live in other processes.
func (l *Ledger) insertConfig() *river.Config {
	return &river.Config{
		Logger:              l.cfg.Logger,
		Schema:              l.cfg.Schema,
		Workers:             l.workers,
		SkipUnknownJobCheck: true,
		FetchCooldown:       l.cfg.FetchCooldown,
		FetchPollInterval:   l.cfg.FetchPollInterval,
		JobTimeout:          l.cfg.JobTimeout,
		Hooks:               []rivertype.Hook{createdAtHook},
		// River's own rescuer is only a backstop behind the lease sweep: it discards
		// stuck jobs whose kind the leader has no worker for (a relay-only leader would
		// discard webhook deliveries), so the sweep must always see them first.
		RescueStuckJobsAfter: 2*l.cfg.RescueStuckJobsAfter + l.cfg.RescueInterval,
	}
}

// reindexList is what River's nightly reindexer is given: on PostgreSQL reindexable's
// list; on SQLite none. SQLite's b-trees do not keep the dead entries PostgreSQL's
// indexes bloat with (VACUUM is its remedy), River's default names indexes its SQLite
// migrations do not make (it would warn about them every night), and a REINDEX there
// holds the file's one write lock, stalling every writer of the hub, for as long as it
// takes on a large river_job.
func (l *Ledger) reindexList() []string {
	if l.backend == Postgres {
		return l.reindex
	}
	return []string{} // non-nil: River reindexes nothing
}

// runConfig is the configuration of a working client with worker id id (empty: River
// picks one) and the given queues.
func (l *Ledger) runConfig(id string, queues map[string]river.QueueConfig) *river.Config {
	c := l.insertConfig()
	c.ID = id
	c.Queues = queues
	c.CompletedJobRetentionPeriod = l.cfg.CompletedRetention
	c.DiscardedJobRetentionPeriod = l.cfg.DiscardedRetention
	c.CancelledJobRetentionPeriod = l.cfg.DiscardedRetention
	c.ReindexerIndexNames = l.reindexList()
	return c
}

// Backend reports which database the ledger uses.
func (l *Ledger) Backend() Backend { return l.backend }

// DB is a database/sql handle on the ledger's database for the packages' own tables:
// on PostgreSQL built on Pool() (pgx stdlib), on SQLite the single-connection file.
func (l *Ledger) DB() *sql.DB { return l.db }

// Pool is the pgx pool on PostgreSQL, nil on SQLite.
func (l *Ledger) Pool() *pgxpool.Pool { return l.pool }

// Schema is the PostgreSQL schema of River's tables ("" = search_path, and on SQLite).
func (l *Ledger) Schema() string { return l.cfg.Schema }

// Config returns the configuration with defaults applied.
func (l *Ledger) Config() Config { return l.cfg }

// Table qualifies one of River's tables (river_job, river_queue...) for raw queries.
func (l *Ledger) Table(name string) string {
	if l.backend == Postgres && l.cfg.Schema != "" {
		return pgx.Identifier{l.cfg.Schema, name}.Sanitize()
	}
	return name
}

// Workers is the registry the job workers go into: river.AddWorker(l.Workers(), w).
// Register before Start.
func (l *Ledger) Workers() *river.Workers { return l.workers }

// AddQueue declares a queue this process works with up to maxWorkers jobs at once.
// Before Start it is recorded; after Start it is added to the running client (and to
// every client the Ledger starts later).
func (l *Ledger) AddQueue(name string, maxWorkers int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.queues[name]; ok {
		return hub.Errorf(hub.AlreadyExists, "ledger: queue %q already added", name)
	}
	q := river.QueueConfig{MaxWorkers: maxWorkers}
	if l.work != nil {
		if err := l.work.c.Queues().Add(name, q); err != nil {
			return hub.Wrap(hub.InvalidArgument, err)
		}
	}
	l.queues[name] = q
	return nil
}

// WorkerID is the id under which this Ledger works jobs now, as River records it in a
// job's attempted_by: empty before Start, after Stop and while fenced (see
// presence.go). With presence on it changes at every Start and after every fence.
func (l *Ledger) WorkerID() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.work == nil {
		return ""
	}
	return l.work.id
}

// current returns the client non-Tx calls go through: the working one when started
// (so its producers hear about local inserts at once), else the insert-only one.
func (l *Ledger) current() (client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, hub.Errorf(hub.FailedPrecondition, "ledger: closed")
	}
	if l.work != nil {
		return l.work.c, nil
	}
	if l.backend == Postgres {
		return l.pgInsert, nil
	}
	return l.sqlInsert, nil
}
