package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" database/sql driver

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/schemaver"
)

func openDBFromPool(pool *pgxpool.Pool) *sql.DB { return stdlib.OpenDBFromPool(pool) }

// migratePostgres creates the schema and runs River's migrations into it. Several
// processes may open the same database at once (relays starting together); a
// session advisory lock serialises them so two never run the same migration.
func migratePostgres(ctx context.Context, pool *pgxpool.Pool, driver *riverpgxv5.Driver, cfg Config) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return hub.Errorf(hub.Unavailable, "ledger: migrate: %w", err)
	}
	defer conn.Release()
	lockKey := "eventhub.ledger.migrate." + cfg.Schema
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", lockKey); err != nil {
		return hub.Errorf(hub.Unavailable, "ledger: migrate lock: %w", err)
	}
	defer func() {
		// A fresh context: the unlock must run even when ctx is done.
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = conn.Exec(uctx, "SELECT pg_advisory_unlock(hashtext($1))", lockKey)
	}()
	check := schemaver.Checking(ctx) // `hub migrate schema --check`: change nothing, report
	if cfg.Schema != "" {
		// Look first: CREATE SCHEMA IF NOT EXISTS still needs the CREATE privilege on the
		// database, which a role migrating into a schema made for it may not have.
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", cfg.Schema).Scan(&exists); err != nil {
			return hub.Errorf(hub.Unavailable, "ledger: look up schema %q: %w", cfg.Schema, err)
		}
		if !exists && check != nil {
			check.Add("schema " + cfg.Schema)
			return nil // and every table in it
		}
		if !exists {
			if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{cfg.Schema}.Sanitize()); err != nil {
				return hub.Errorf(hub.FailedPrecondition, "ledger: create schema %q: %w", cfg.Schema, err)
			}
		}
	}
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: cfg.Schema, Logger: cfg.Logger})
	if err != nil {
		return hub.Wrap(hub.Internal, err)
	}
	if check != nil {
		res, err := m.Validate(ctx, nil)
		if err != nil {
			return hub.Errorf(hub.Unavailable, "ledger: check River's migrations: %w", err)
		}
		if !res.OK {
			check.Add("River's migrations (" + strings.Join(res.Messages, "; ") + ")")
		}
		for _, idx := range unusedRiverIndexes {
			name := inSchema(cfg.Schema, idx)
			if exists, _, err := lookUpIndex(ctx, conn, name); err != nil {
				return hub.Errorf(hub.Unavailable, "ledger: look up index %s: %w", name, err)
			} else if exists {
				check.Add("index " + name + " (River's, unused: to drop)")
			}
		}
		return nil
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err == nil && len(res.Versions) > 0 {
		v := make([]string, len(res.Versions))
		for i, r := range res.Versions {
			v[i] = strconv.Itoa(r.Version)
		}
		schemaver.Applied(ctx, "River's migrations "+strings.Join(v, ", "))
	}
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == sqlstateInsufficientPrivilege {
			return hub.Errorf(hub.FailedPrecondition, "ledger: River's tables need a migration this role may not run: "+
				"run `hub migrate schema` (or start this version once) as the tables' owner: %w", err)
		}
		return hub.Errorf(hub.Unavailable, "ledger: migrate: %w", err)
	}
	return dropUnusedRiverIndexes(ctx, conn.Conn(), cfg)
}

// SQLSTATEs dropUnusedRiverIndexes lets pass (PostgreSQL's errcodes appendix).
const (
	sqlstateInsufficientPrivilege = "42501"
	sqlstateLockNotAvailable      = "55P03"
)

// dropLockTimeout bounds how long Open waits, per index, for the transactions using
// river_job to end before it drops the index (DROP INDEX CONCURRENTLY waits for them).
const dropLockTimeout = 10 * time.Second

// dropUnusedRiverIndexes drops unusedRiverIndexes. CONCURRENTLY: replicas already
// running on the table keep writing while an upgraded one drops them (it cannot run in
// a transaction, hence one statement each). A role that may not drop them (the tables
// owned by a migration role), a transaction that holds the table past
// dropLockTimeout, or a deadlock with another replica's concurrent index build
// (EnsureIndexes) leaves them in place, with a warning: they cost speed, not
// correctness, and the next start tries again.
func dropUnusedRiverIndexes(ctx context.Context, conn *pgx.Conn, cfg Config) error {
	if _, err := conn.Exec(ctx, fmt.Sprintf("SET lock_timeout = %d", dropLockTimeout.Milliseconds())); err != nil {
		return hub.Errorf(hub.Unavailable, "ledger: migrate: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "RESET lock_timeout") }()
	for _, name := range unusedRiverIndexes {
		idx := inSchema(cfg.Schema, name)
		_, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+idx)
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
		case errors.As(err, &pgErr) && (pgErr.Code == sqlstateInsufficientPrivilege || pgErr.Code == sqlstateLockNotAvailable ||
			pgErr.Code == sqlstateDeadlock): // with another replica's concurrent index build (index.go)
			cfg.Logger.Warn("ledger: River's unused index left in place (it slows every job's writes; drop it as its owner)",
				"index", idx, "error", pgErr.Message)
		default:
			return hub.Errorf(hub.Unavailable, "ledger: migrate: drop index %s: %w", name, err)
		}
	}
	return nil
}

// unusedRiverIndexes are the GIN indexes River's migration 002 puts on river_job's
// args and metadata, which the ledger drops after migrating. No query of the hub's
// uses them (it looks deliveries up by id, tags and expression indexes of its own,
// transports/webhook), nor any of River's (v0.51) but JobList's Metadata filter, which
// the hub never sets. They cost every job's insert and every state change (not a HOT
// update: state is indexed) an entry per key and per value of the job's JSON, about
// twenty for a webhook delivery, and their pending lists are merged into the index in
// the foreground of whichever insert fills them: dropped, deliveries on PostgreSQL ran
// about 16% faster (docs/BENCHMARKS.md).
// TestRiverMigrationsLeaveGINIndexesAlone fails if a later River migration names them.
var unusedRiverIndexes = []string{"river_job_args_index", "river_job_metadata_index"}

// reindexable is the list of indexes River's daily reindexer (REINDEX INDEX
// CONCURRENTLY at midnight UTC, on the leader) is given: River's default without the
// GIN indexes Open drops, which it would otherwise report missing at every run; and
// none when this role may not reindex river_job (up to PostgreSQL 16 only its owner
// may: a hub running as a role with DML only, the tables migrated by their owner, would
// log an error per index every night).
func reindexable(ctx context.Context, pool *pgxpool.Pool, schema string) ([]string, error) {
	var mayReindex bool
	err := pool.QueryRow(ctx, `SELECT COALESCE(
		(SELECT pg_has_role(current_user, c.relowner, 'USAGE') FROM pg_class c WHERE c.oid = to_regclass($1)),
		false)`, inSchema(schema, "river_job")).Scan(&mayReindex)
	if err != nil {
		return nil, hub.Errorf(hub.Unavailable, "ledger: look up river_job's owner: %w", err)
	}
	if !mayReindex {
		return []string{}, nil // non-nil: River reindexes nothing
	}
	var names []string
	for _, n := range river.ReindexerIndexNamesDefault() {
		if !slices.Contains(unusedRiverIndexes, n) {
			names = append(names, n)
		}
	}
	return names, nil
}

func migrateSQLite(ctx context.Context, driver *riversqlite.Driver, cfg Config) error {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: cfg.Logger})
	if err != nil {
		return hub.Wrap(hub.Internal, err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return hub.Errorf(hub.Unavailable, "ledger: migrate: %w", err)
	}
	return nil
}

// openSQLiteDB opens the file with the setup the package doc explains: WAL, a busy
// timeout, IMMEDIATE transactions, synchronous=FULL (a committed outbox row survives
// a power loss, not just a process crash) and a single connection.
func openSQLiteDB(ctx context.Context, path string, busy time.Duration) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open(stmtCacheDriverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, hub.Errorf(hub.InvalidArgument, "ledger: open sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	// Keep the connection: reopening would redo the pragmas and drop SQLite's cache.
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, hub.Errorf(hub.Unavailable, "ledger: open sqlite %s: %w", path, err)
	}
	return db, nil
}
