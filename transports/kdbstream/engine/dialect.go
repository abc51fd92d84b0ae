package engine

import (
	"context"
	"database/sql"
	"errors"

	"github.com/koder/eventhub/hub"
)

// dialect is everything that differs between the databases the engine runs on, one
// implementation per database (dialect_sqlite.go, dialect_postgres.go), chosen once
// from Config.Driver: the model is River's riverdriver, one driver per database behind
// one interface. The command logic (ids, groups, the pending list, trims, Redis's
// counters) is written once against it; a dialect owns the connection and the DDL,
// placeholders, row locking, transactions and their durability, the wake-up of readers
// in other processes, the statements shaped differently per database (upserts into the
// stream row with NOTIFY, XACK's id list, PostgreSQL's one-round-trip append) and its
// table of native errors (sqliteErrorCode, postgresErrorCode).
//
// The engine calls a dialect per statement or per batch, never per row: the hot paths
// (group commit, XACK, the fast reads) pay one interface call where the engine used to
// test a flag.
//
// One dialect serves one Engine. open and close run under the engine's readyMu; every
// transaction is bracketed by begin and end; stmt, saveAppended, appendRows and
// deletePending run inside one (on its tx), stmtNoTx outside any.
// They are safe for concurrent use (PostgreSQL runs transactions side by side; SQLite's
// begin queues them). appendFast is called by the committer goroutine only.
type dialect interface {
	// driver is the Config.Driver value the dialect serves.
	driver() string

	// open connects, creates the tables when missing and starts any background work
	// the database needs (PostgreSQL's LISTEN connection). It returns the handle the
	// engine keeps and closes. On error nothing is left open and the error carries a
	// hub code; open may then be called again (Config.Lazy).
	open(ctx context.Context) (*sql.DB, error)
	// close stops what open started and releases prepared statements; the engine then
	// closes the handle itself. Safe when open never succeeded, and more than once.
	close()

	// rebind rewrites the engine's '?' placeholders into the database's own.
	rebind(q string) string
	// lockRow is appended to the SELECT of one stream row so that it locks the row for
	// the transaction ("FOR UPDATE"); "" where a transaction already excludes every
	// other writer.
	lockRow() string

	// begin starts a transaction. relaxed is for consumer bookkeeping (inTxRelaxed):
	// the commit need not wait for the disk flush. end must follow every successful
	// begin once the transaction has committed or rolled back; begin releases what it
	// took itself when it fails.
	begin(ctx context.Context, relaxed bool) (*sql.Tx, error)
	// end runs after the transaction from begin is over (SQLite: the connection is free
	// again, so statements first met inside it are prepared now).
	end(ctx context.Context)

	// stmt resolves q (with '?' placeholders) for tx: a statement prepared once and
	// bound to tx (SQLite's statement cache), or the text in the database's own
	// placeholders (PostgreSQL, whose driver prepares and caches by text). The engine
	// runs it with its arguments, so they never pass through the interface (a
	// variadic slice handed to an interface method escapes to the heap).
	stmt(ctx context.Context, tx *sql.Tx, q string) (stmt, error)
	// stmtNoTx is stmt for a read outside any transaction (the unlocked looks of
	// fastpath.go), run on the engine's handle.
	stmtNoTx(ctx context.Context, q string) (stmt, error)

	// saveAppended writes s's row after entries were appended to it and tells blocked
	// readers in other processes sharing the database (PostgreSQL: a NOTIFY in the same
	// statement, delivered at commit). Readers in this process are woken by the engine
	// once the transaction committed.
	saveAppended(ctx context.Context, tx *sql.Tx, s *stream) error
	// appendRows inserts rows, all of stream s, then saves s as saveAppended does, in as
	// few round trips as the database allows.
	appendRows(ctx context.Context, tx *sql.Tx, rows []pendingRow, s *stream) error
	// deletePending removes ids from a group's pending list and returns how many were
	// pending, each id once however often it is listed (XACK's reply), with one
	// statement per chunk of ids.
	deletePending(ctx context.Context, tx *sql.Tx, sid int64, grp string, ids []ID) (int64, error)

	// appendFast commits a group-commit batch without the general path (applyAdds in a
	// begin/end transaction) when the database has a faster way for it. handled false,
	// with nothing written, sends the batch down the general path; handled true means
	// the batch's results are filled in (err non-nil: the outcome is ambiguous, as a
	// failed COMMIT is). It may keep state between batches without locking.
	appendFast(ctx context.Context, reqs []*appendReq) (touched []string, handled bool, err error)
}

// dialects maps Config.Driver to its dialect's constructor. A constructor does no I/O.
var dialects = map[string]func(cfg Config, w *waiters) dialect{
	DriverSQLite:   func(cfg Config, _ *waiters) dialect { return newSQLite(cfg) },
	DriverPostgres: func(cfg Config, w *waiters) dialect { return newPostgres(cfg, w) },
}

// errorTables are the dialects' tables from native errors to hub codes. classify is
// called without an engine at hand, and an error is native to one database only, so
// every table is asked in turn.
var errorTables = []func(error) (hub.ErrorCode, bool){sqliteErrorCode, postgresErrorCode}

// dbCode gives a database error its hub code: the dialects' tables first, then what
// database/sql and the network report for any database.
//   - sql.ErrConnDone and net errors -> Unavailable (a connection can be made again).
//   - anything else -> Unknown.
func dbCode(err error) hub.ErrorCode {
	for _, table := range errorTables {
		if c, ok := table(err); ok {
			return c
		}
	}
	if errors.Is(err, sql.ErrConnDone) || isNetErr(err) {
		return hub.Unavailable
	}
	return hub.Unknown
}

// stmt is a statement resolved by a dialect: prepared, or the text to send.
type stmt struct {
	prepared *sql.Stmt // bound to the transaction (or, outside one, on the handle)
	text     string    // when prepared is nil
}

func (s stmt) exec(ctx context.Context, tx *sql.Tx, args ...any) (sql.Result, error) {
	if s.prepared != nil {
		return s.prepared.ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, s.text, args...)
}

func (s stmt) query(ctx context.Context, tx *sql.Tx, args ...any) (*sql.Rows, error) {
	if s.prepared != nil {
		return s.prepared.QueryContext(ctx, args...)
	}
	return tx.QueryContext(ctx, s.text, args...)
}

func (s stmt) queryRow(ctx context.Context, tx *sql.Tx, args ...any) *sql.Row {
	if s.prepared != nil {
		return s.prepared.QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, s.text, args...)
}

// queryRowDB runs a stmtNoTx statement on db.
func (s stmt) queryRowDB(ctx context.Context, db *sql.DB, args ...any) *sql.Row {
	if s.prepared != nil {
		return s.prepared.QueryRowContext(ctx, args...)
	}
	return db.QueryRowContext(ctx, s.text, args...)
}

// row is QueryRow with a prepare error folded into Scan, like *sql.Row.
type row struct {
	r   *sql.Row
	err error
}

func (r row) Scan(dst ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.r.Scan(dst...)
}
