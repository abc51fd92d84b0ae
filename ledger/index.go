package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/schemaver"
)

// Index is a secondary index a package keeps on one of the ledger's tables that may
// already hold many rows when the index is first wanted (river_job, after an upgrade
// that adds one).
type Index struct {
	// Name is the index's name, unqualified: it lives in its table's schema.
	Name string
	// Table is the table, unqualified (EnsureIndexes qualifies it as Table does).
	Table string
	// Def is what follows the table in CREATE INDEX: the column list, then any WHERE.
	Def string
}

// SQLSTATEs EnsureIndexes handles (PostgreSQL's errcodes appendix).
const (
	sqlstateDuplicateTable  = "42P07" // another process created the index first
	sqlstateUniqueViolation = "23505" // the same race, caught on pg_class
	sqlstateDeadlock        = "40P01"
)

// smallTable is the row count under which EnsureIndexes builds an index in a
// transaction: a build of milliseconds, against a concurrent build's wait for every
// transaction open in the database (its last phase waits for all older snapshots, not
// only those on the table).
const smallTable = 10000

// indexLockPoll is how often EnsureIndexes asks again for the lock another process
// holds while it builds the same index.
const indexLockPoll = 100 * time.Millisecond

// EnsureIndexes creates each index that does not exist yet, so that the processes
// already writing to the table keep writing while it is built.
//
// CreateTables builds an index inside a transaction: on a table of millions of rows
// (river_job, when an upgrade adds an index to it) that holds every writer of every
// replica for the whole build, a stall a rolling upgrade must not cause. On PostgreSQL
// EnsureIndexes therefore:
//
//   - looks the index up first and does nothing when a valid one exists, so starting
//     needs no DDL, and no ownership of the table, once the index is there;
//   - builds it in a transaction, as CreateTables does, when the table holds fewer
//     than smallTable rows (a fresh database; milliseconds);
//   - otherwise builds it with CREATE INDEX CONCURRENTLY in the background: it returns
//     at once, so neither the replicas already writing nor this process's start wait
//     for the build (which itself waits for the transactions open when it begins); the
//     build's start and end are logged, and Close cancels one still running. Builds
//     run one at a time per table, on a connection of their own (not the pool's) with
//     no statement or lock timeout, under a session advisory lock of the table's, so
//     that replicas starting together build each index once and two builds never
//     overlap (two concurrent builds on one table deadlock); a build a deadlock ended
//     anyway (another session waiting for the table's lock while holding a snapshot)
//     is started again. The others poll for that lock rather than wait on it: a
//     session blocked on the lock is itself an open transaction, which the concurrent
//     build would wait for, a deadlock;
//   - drops an invalid index of that name first: what a concurrent build leaves behind
//     when it fails (a process killed mid-build, a statement cancelled);
//   - leaves a missing index missing, with a warning, when the role may not create it
//     (the tables belong to a migration role): an index costs speed, not correctness.
//
// Until a background build ends, the queries the index serves run without it.
//
// On SQLite it runs CREATE INDEX IF NOT EXISTS: the file has one writer, the hub.
func (l *Ledger) EnsureIndexes(ctx context.Context, idx ...Index) error {
	if p := schemaver.Checking(ctx); p != nil {
		return l.checkIndexes(ctx, p, idx)
	}
	var later []Index
	for _, ix := range idx {
		big, err := l.ensureIndex(ctx, ix)
		if err != nil {
			return indexErr(ix.Name, err)
		}
		if big {
			later = append(later, ix)
		}
	}
	if len(later) == 0 {
		return nil
	}
	if migrating, _ := schemaver.Migration(ctx); migrating {
		// A migration run (`hub migrate schema`) is there to leave every index built:
		// it waits, and a build that failed fails it.
		return l.buildLater(ctx, later)
	}
	// In the background: the build can take minutes on a large table, and a process
	// that has not finished starting by then may be restarted by its supervisor (a
	// liveness probe), which would cancel the build and start it again, a loop. The
	// indexes are a speed-up; the process runs without them meanwhile.
	l.builds.Add(1)
	go func() {
		defer l.builds.Done()
		_ = l.buildLater(l.buildCtx, later) // logged; the next start tries again
	}()
	return nil
}

// checkIndexes adds to p, in a check run (`hub migrate schema --check`), each index of
// idx that is missing or invalid on PostgreSQL (SQLite builds them at every start).
func (l *Ledger) checkIndexes(ctx context.Context, p *schemaver.Pending, idx []Index) error {
	if l.backend != Postgres {
		return nil
	}
	for _, ix := range idx {
		name := inSchema(l.cfg.Schema, ix.Name)
		exists, valid, err := lookUpIndex(ctx, l.pool, name)
		if err != nil {
			return indexErr(ix.Name, err)
		}
		if !exists || !valid {
			p.Add("index " + name)
		}
	}
	return nil
}

// indexErr classifies an error of EnsureIndexes: the context's as it is, a definition
// PostgreSQL rejects (class 42: syntax, an unknown column) as Internal, others
// (the database unreachable) as Unavailable.
func indexErr(name string, err error) error {
	var he *hub.Error
	if errors.As(err, &he) {
		return err // classified already (indexDenied's FailedPrecondition)
	}
	code := hub.Unavailable
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "42") {
		code = hub.Internal
	}
	return hub.Wrap(code, fmt.Errorf("ledger: index %s: %w", name, err))
}

// inSchema is name quoted, qualified by schema when there is one: how the ledger names
// an index (it lives in its table's schema) in DDL and catalog lookups.
func inSchema(schema, name string) string {
	if schema != "" {
		return pgx.Identifier{schema, name}.Sanitize()
	}
	return pgx.Identifier{name}.Sanitize()
}

// ensureIndex makes ix, or reports that it is missing on a large table (big): the
// caller builds those in the background.
func (l *Ledger) ensureIndex(ctx context.Context, ix Index) (big bool, err error) {
	create := "CREATE INDEX IF NOT EXISTS " + pgx.Identifier{ix.Name}.Sanitize() + " ON " + l.Table(ix.Table) + " " + ix.Def
	if l.backend != Postgres {
		_, err := l.db.ExecContext(ctx, create)
		return false, err
	}
	name := inSchema(l.cfg.Schema, ix.Name)
	exists, valid, err := lookUpIndex(ctx, l.pool, name)
	if err != nil || (exists && valid) {
		return false, err
	}
	if exists {
		return true, nil // invalid: a failed concurrent build's, dropped by the rebuild
	}
	var n int
	if err := l.pool.QueryRow(ctx, "SELECT count(*) FROM (SELECT FROM "+l.Table(ix.Table)+" LIMIT $1) AS s", smallTable).Scan(&n); err != nil {
		return false, err
	}
	if n >= smallTable {
		return true, nil
	}
	// Built in a transaction: it queues behind the transactions writing to the table
	// and holds new writers while it waits and builds, which on a table this small is
	// a build of milliseconds; a concurrent build would wait for every transaction
	// open in the database instead.
	err = l.CreateTables(ctx, create)
	if err == nil {
		schemaver.Applied(ctx, "index "+name)
	}
	return false, l.indexDenied(ctx, name, err)
}

// buildLater builds the indexes one after another, each concurrently: two concurrent
// builds on one table deadlock (each waits for the other's snapshot), so they never
// overlap, in this process or across replicas (one advisory lock per table).
func (l *Ledger) buildLater(ctx context.Context, idx []Index) error {
	var errs []error
	for _, ix := range idx {
		name := inSchema(l.cfg.Schema, ix.Name)
		err := l.buildConcurrently(ctx, ix, name)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			if ctx == l.buildCtx {
				l.cfg.Logger.Warn("ledger: index build stopped by Close; the next start builds it", "index", name)
			}
			return errors.Join(append(errs, ctx.Err())...)
		default:
			l.cfg.Logger.Error("ledger: index not built; the next start tries again (queries it serves run without it meanwhile)",
				"index", name, "error", err)
			errs = append(errs, indexErr(ix.Name, err))
		}
	}
	return errors.Join(errs...)
}

// buildRetries bounds the builds of one index that a deadlock ended: a session that
// waits for river_job's lock while holding a snapshot (another replica's DROP INDEX
// CONCURRENTLY of River's GIN indexes at its start, River's reindexer) and the
// build's last phase, which waits for that snapshot, deadlock, and PostgreSQL ends one
// of them, often the build.
var buildRetries = []time.Duration{time.Second, 5 * time.Second, 30 * time.Second}

// buildConcurrently builds (or rebuilds, when invalid) the index named name with
// CREATE INDEX CONCURRENTLY, on a connection of its own (not the pool's: the build
// and the wait for another process's take minutes), under the table's advisory lock.
func (l *Ledger) buildConcurrently(ctx context.Context, ix Index, name string) error {
	conn, err := pgx.ConnectConfig(ctx, l.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	// Closing the session ends the build if ctx ended it, and releases the lock.
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	// A timeout of the role, the database or the DSN would cancel a long build, and
	// every start would build it again.
	if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "SET lock_timeout = 0"); err != nil {
		return err
	}
	key := "eventhub.index." + l.cfg.Schema + "." + ix.Table
	if err := tryLockLoop(ctx, conn, key, func() {
		l.cfg.Logger.Info("ledger: waiting for another build of an index on the table", "index", name, "table", ix.Table)
	}); err != nil {
		return err
	}
	for try := 0; ; try++ {
		err := l.buildOnce(ctx, conn, ix, name)
		var pgErr *pgconn.PgError
		if try == len(buildRetries) || !errors.As(err, &pgErr) || pgErr.Code != sqlstateDeadlock {
			return err
		}
		l.cfg.Logger.Warn("ledger: index build ended by a deadlock; building it again", "index", name, "in", buildRetries[try])
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(buildRetries[try]):
		}
	}
}

// buildOnce is one build of ix on conn, which holds the table's lock.
func (l *Ledger) buildOnce(ctx context.Context, conn *pgx.Conn, ix Index, name string) error {
	exists, valid, err := lookUpIndex(ctx, conn, name)
	switch {
	case err != nil:
		return err
	case exists && valid:
		return nil // built by the process that held the lock
	case exists:
		l.cfg.Logger.Warn("ledger: dropping an invalid index a failed build left, to build it again", "index", name)
		if _, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+name); err != nil {
			return l.indexDenied(ctx, name, err)
		}
	}
	var rows float64
	_ = conn.QueryRow(ctx, "SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)", l.Table(ix.Table)).Scan(&rows)
	l.cfg.Logger.Info("ledger: building an index concurrently (writers continue; it waits for the transactions open in the database, a long one included)",
		"index", name, "table", ix.Table, "rows_estimate", int64(max(rows, 0)))
	start := time.Now()
	_, err = conn.Exec(ctx, "CREATE INDEX CONCURRENTLY IF NOT EXISTS "+pgx.Identifier{ix.Name}.Sanitize()+
		" ON "+l.Table(ix.Table)+" "+ix.Def)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == sqlstateDuplicateTable || pgErr.Code == sqlstateUniqueViolation) {
		// A process of an earlier version (CREATE INDEX in CreateTables, without this
		// lock) made it meanwhile.
		err = nil
	}
	if err != nil {
		return l.indexDenied(ctx, name, err)
	}
	l.cfg.Logger.Info("ledger: index built", "index", name, "took", time.Since(start).Round(time.Millisecond))
	schemaver.Applied(ctx, "index "+name)
	return nil
}

// indexDenied turns a build the role may not run into a warning (the index is left
// as it is); any other error is returned, and in a migration run (schemaver.AsMigration,
// which must leave every index built) that one too.
func (l *Ledger) indexDenied(ctx context.Context, name string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == sqlstateInsufficientPrivilege {
		if migrating, _ := schemaver.Migration(ctx); migrating {
			return hub.Errorf(hub.FailedPrecondition, "ledger: index %s: this role may not build it: run the migration as the table's owner: %w", name, err)
		}
		l.cfg.Logger.Warn("ledger: index not built: this role may not (it is a speed-up, not needed for correctness; build it as the table's owner)",
			"index", name, "error", pgErr.Message)
		return nil
	}
	return err
}

// queryRower is what lookUpIndex reads with: the pool or a connection.
type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// lookUpIndex reports whether the index (a qualified, quoted name) exists and whether
// it is valid (a failed concurrent build leaves an invalid one, which no query reads).
func lookUpIndex(ctx context.Context, q queryRower, name string) (exists, valid bool, err error) {
	err = q.QueryRow(ctx, "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)", name).Scan(&valid)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	return err == nil, valid, err
}

// tryLockLoop takes the session advisory lock on key, asking every indexLockPoll
// (calling waiting once, when the first ask fails) until ctx ends.
func tryLockLoop(ctx context.Context, conn *pgx.Conn, key string, waiting func()) error {
	for first := true; ; first = false {
		var got bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtext($1))", key).Scan(&got); err != nil {
			return err
		}
		if got {
			return nil
		}
		if first {
			waiting()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the build lock: %w", ctx.Err())
		case <-time.After(indexLockPoll):
		}
	}
}
