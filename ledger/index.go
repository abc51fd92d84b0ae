package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/koder/eventhub/hub"
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
)

// smallTable is the row count under which EnsureIndexes builds an index in a
// transaction: a few milliseconds of held writes, against a concurrent build's wait for
// every transaction open in the database (its last phase waits for all older
// snapshots, not only those on the table).
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
//     build's start and end are logged, and Close cancels one still running. It runs
//     under a session advisory lock of the index's own, so that replicas starting
//     together build it once. The others poll for that lock rather than wait on it: a
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
	for _, ix := range idx {
		if err := l.ensureIndex(ctx, ix); err != nil {
			return hub.Errorf(hub.Unavailable, "ledger: index %s: %w", ix.Name, err)
		}
	}
	return nil
}

func (l *Ledger) ensureIndex(ctx context.Context, ix Index) error {
	if l.backend != Postgres {
		_, err := l.db.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS `+ix.Name+` ON `+ix.Table+` `+ix.Def)
		return err
	}
	name := l.Table(ix.Name) // an index is named in its table's schema
	exists, valid, err := l.lookUpIndex(ctx, l.pool, name)
	if err != nil || (exists && valid) {
		return err
	}
	if !exists {
		var n int
		if err := l.pool.QueryRow(ctx, "SELECT count(*) FROM (SELECT FROM "+l.Table(ix.Table)+" LIMIT $1) AS s", smallTable).Scan(&n); err != nil {
			return err
		}
		if n < smallTable {
			// Built in a transaction: it holds the table's writers for milliseconds, and
			// unlike a concurrent build it waits only for the transactions on this table.
			return l.indexDenied(name, l.CreateTables(ctx, "CREATE INDEX IF NOT EXISTS "+pgx.Identifier{ix.Name}.Sanitize()+
				" ON "+l.Table(ix.Table)+" "+ix.Def))
		}
	}
	// In the background: the build can take minutes on a large table, and a process
	// that has not finished starting by then may be restarted by its supervisor (a
	// liveness probe), which would cancel the build and start it again, a loop. The
	// index is a speed-up; the process runs without it meanwhile.
	l.builds.Add(1)
	go func() {
		defer l.builds.Done()
		err := l.buildConcurrently(l.buildCtx, ix, name)
		switch {
		case err == nil:
		case l.buildCtx.Err() != nil:
			l.cfg.Logger.Warn("ledger: index build stopped by Close; the next start builds it", "index", name)
		default:
			l.cfg.Logger.Error("ledger: index not built; the next start tries again (queries it serves run without it meanwhile)",
				"index", name, "error", err)
		}
	}()
	return nil
}

// buildConcurrently builds (or rebuilds, when invalid) the index named name with
// CREATE INDEX CONCURRENTLY, under the index's own session advisory lock.
func (l *Ledger) buildConcurrently(ctx context.Context, ix Index, name string) error {
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	key := "eventhub.index." + l.cfg.Schema + "." + ix.Name
	if err := tryLockLoop(ctx, conn.Conn(), key, func() {
		l.cfg.Logger.Info("ledger: waiting for another process building an index", "index", name)
	}); err != nil {
		return err
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = conn.Exec(uctx, "SELECT pg_advisory_unlock(hashtext($1))", key)
	}()

	exists, valid, err := l.lookUpIndex(ctx, conn, name)
	switch {
	case err != nil:
		return err
	case exists && valid:
		return nil // built by the process that held the lock
	case exists:
		l.cfg.Logger.Warn("ledger: dropping an invalid index a failed build left, to build it again", "index", name)
		if _, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+name); err != nil {
			return l.indexDenied(name, err)
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
		return l.indexDenied(name, err)
	}
	l.cfg.Logger.Info("ledger: index built", "index", name, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// indexDenied turns a build the role may not run into a warning (the index is left
// as it is); any other error is returned.
func (l *Ledger) indexDenied(name string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == sqlstateInsufficientPrivilege {
		l.cfg.Logger.Warn("ledger: index not built: this role may not (it is a speed-up, not needed for correctness; build it as the table's owner)",
			"index", name, "error", pgErr.Message)
		return nil
	}
	return err
}

// queryRower is what lookUpIndex reads with: the pool or one connection of it.
type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// lookUpIndex reports whether the index (a qualified, quoted name) exists and whether
// it is valid (a failed concurrent build leaves an invalid one, which no query reads).
func (l *Ledger) lookUpIndex(ctx context.Context, q queryRower, name string) (exists, valid bool, err error) {
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
