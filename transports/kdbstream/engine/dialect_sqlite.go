package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/koder/eventhub/hub"
)

// sqliteDialect runs the engine on one SQLite file (modernc.org/sqlite, pure Go) in WAL
// mode, over a single connection. What is particular to it:
//   - one connection, so one transaction at a time (txMu): SQLite has one writer
//     anyway, and the queue in front of the connection replaces row locks;
//   - durability per transaction: appends commit with the configured synchronous
//     pragma, consumer bookkeeping with NORMAL (the pragma is switched between
//     transactions, only when it changes);
//   - every statement text prepared once (stmtCache, dialect_sqlite_stmts.go): the
//     driver parses a text on every Exec otherwise;
//   - XACK binds its ids as a VALUES list of power-of-two length (deletePending);
//   - no other process to wake: blocked reads are woken in-process only.
type sqliteDialect struct {
	cfg     Config
	strict  string // the configured synchronous pragma, upper case
	relaxed string // the pragma of relaxed transactions
	db      *sql.DB
	stmts   stmtCache

	txMu sync.Mutex // one transaction at a time, with its synchronous mode
	sync string     // the synchronous pragma the connection runs with now; "" = the DSN's

	shared bool      // db is Config.DB, another component's handle
	conn   *sql.Conn // a shared handle's connection held by a relaxed transaction
}

func newSQLite(cfg Config) *sqliteDialect {
	d := &sqliteDialect{cfg: cfg, strict: strings.ToUpper(cfg.Synchronous)}
	d.relaxed = d.strict
	if d.strict != "OFF" {
		d.relaxed = "NORMAL"
	}
	return d
}

func (d *sqliteDialect) driver() string { return DriverSQLite }

// open opens the file in WAL mode with one connection. One connection because SQLite
// has one writer anyway: a pool would only turn contention into SQLITE_BUSY retries,
// while a single connection queues commands in database/sql (the same choice River's
// SQLite driver documents). Readers wait too; XRANGE is not a hot path.
func (d *sqliteDialect) open(ctx context.Context) (*sql.DB, error) {
	if d.cfg.DB != nil {
		return d.openShared(ctx)
	}
	path := strings.TrimPrefix(d.cfg.DSN, "file:")
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+d.strict+")")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", DefaultBusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(OFF)")
	q.Add("_pragma", "cache_size(-32768)") // 32 MiB: the hot tail of the stream and the PEL stay cached
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, hub.Wrap(hub.InvalidArgument, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, classify(err)
	}
	for _, s := range ddlSQLite {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, classify(fmt.Errorf("kdbstream: schema: %w", err))
		}
	}
	d.db, d.sync = db, ""
	return db, nil
}

// openShared takes Config.DB as the engine's handle: the tables are created through
// it and the strict synchronous mode is the handle's own (relaxed transactions run on
// a connection of their own for their duration, so another user of the handle never
// commits with the relaxed setting).
func (d *sqliteDialect) openShared(ctx context.Context) (*sql.DB, error) {
	db := d.cfg.DB
	var level int
	if err := db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&level); err != nil {
		return nil, classify(err)
	}
	// PRAGMA synchronous answers 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
	d.strict = [...]string{"OFF", "NORMAL", "FULL", "EXTRA"}[min(max(level, 0), 3)]
	d.relaxed = d.strict
	if d.strict != "OFF" {
		d.relaxed = "NORMAL"
	}
	for _, s := range ddlSQLite {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return nil, classify(fmt.Errorf("kdbstream: schema: %w", err))
		}
	}
	d.db, d.sync, d.shared = db, d.strict, true
	return db, nil
}

func (d *sqliteDialect) close() { d.closeStmts() }

func (d *sqliteDialect) rebind(q string) string { return q }

// lockRow is empty: the single connection already serialises transactions.
func (d *sqliteDialect) lockRow() string { return "" }

// begin takes the connection for the transaction and sets its synchronous pragma.
// A reconnect resets the pragma to the DSN's (stricter) value: never unsafe.
func (d *sqliteDialect) begin(ctx context.Context, relaxed bool) (*sql.Tx, error) {
	d.txMu.Lock()
	if d.shared {
		return d.beginShared(ctx, relaxed)
	}
	want := d.strict
	if relaxed {
		want = d.relaxed
	}
	if d.sync == "" {
		d.sync = d.strict // the DSN's pragma
	}
	if want != d.sync {
		if _, err := d.db.ExecContext(ctx, "PRAGMA synchronous = "+want); err != nil {
			d.txMu.Unlock()
			return nil, err
		}
		d.sync = want
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		d.txMu.Unlock()
		return nil, err
	}
	return tx, nil
}

func (d *sqliteDialect) end(ctx context.Context) {
	if d.conn != nil {
		// Back to the handle's own setting before the connection goes back to the
		// handle's other users; a failure closes the connection rather than lend it out
		// relaxed (database/sql then opens a fresh one with the DSN's pragmas).
		if _, err := d.conn.ExecContext(ctx, "PRAGMA synchronous = "+d.strict); err != nil {
			_ = d.conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = d.conn.Close()
		d.conn = nil
	}
	d.flushPrepared(ctx)
	d.txMu.Unlock()
}

// beginShared is begin on a shared handle, with txMu held: a strict transaction
// begins on the handle; a relaxed one (when relaxed differs) takes a connection for
// itself, sets the relaxed mode on it and gives it back restored (end).
func (d *sqliteDialect) beginShared(ctx context.Context, relaxed bool) (*sql.Tx, error) {
	if !relaxed || d.relaxed == d.strict {
		tx, err := d.db.BeginTx(ctx, nil)
		if err != nil {
			d.txMu.Unlock()
			return nil, err
		}
		return tx, nil
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		d.txMu.Unlock()
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = "+d.relaxed); err != nil {
		_ = conn.Close()
		d.txMu.Unlock()
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		d.conn = conn
		d.end(ctx)
		return nil, err
	}
	d.conn = conn
	return tx, nil
}

func (d *sqliteDialect) saveAppended(ctx context.Context, tx *sql.Tx, s *stream) error {
	_, err := d.exec(ctx, tx, saveStreamSQL, s.rowValues()...)
	return err
}

func (d *sqliteDialect) appendRows(ctx context.Context, tx *sql.Tx, rows []pendingRow, s *stream) error {
	if err := insertEntries(ctx, d, tx, rows); err != nil {
		return err
	}
	return d.saveAppended(ctx, tx, s)
}

// deletePending binds the ids as parameters of a VALUES list whose length is a power
// of two (padded with the last id, harmless in an IN list), so a handful of statement
// texts stay prepared; json_each was the cheaper text to write but parsing JSON per id
// was a third of the ack's CPU. A later chunk never counts an id an earlier one
// removed, so the count is XACK's.
func (d *sqliteDialect) deletePending(ctx context.Context, tx *sql.Tx, sid int64, grp string, ids []ID) (int64, error) {
	var total int64
	args := make([]any, 0, 2+2*min(len(ids), maxAckChunk))
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), maxAckChunk)]
		ids = ids[len(chunk):]
		size := 1
		for size < len(chunk) {
			size *= 2
		}
		args = append(args[:0], sid, grp)
		for i := range size {
			id := chunk[min(i, len(chunk)-1)]
			args = append(args, id.Ms, id.Seq)
		}
		res, err := d.exec(ctx, tx, ackSQL(size), args...)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// maxAckChunk is the longest VALUES list of one SQLite XACK statement (2*256+2 bound
// parameters, well under SQLite's limit); the stream loop acks up to 1000 ids at once.
const maxAckChunk = 256

var ackSQLs sync.Map // size -> statement text

// ackSQL is the DELETE for a VALUES list of size ids.
func ackSQL(size int) string {
	if q, ok := ackSQLs.Load(size); ok {
		return q.(string)
	}
	var b strings.Builder
	b.WriteString(`DELETE FROM kdb_pending WHERE sid = ? AND grp = ? AND (ms, seq) IN (VALUES `)
	for i := range size {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?)")
	}
	b.WriteByte(')')
	q, _ := ackSQLs.LoadOrStore(size, b.String())
	return q.(string)
}

// appendFast: SQLite has no faster path than one transaction on its one connection.
func (d *sqliteDialect) appendFast(context.Context, []*appendReq) ([]string, bool, error) {
	return nil, false, nil
}

// sqliteErrorCode is SQLite's table (sqlite.org/rescode.html; the primary code is the
// low byte of an extended one):
//   - SQLITE_BUSY, SQLITE_LOCKED: another writer holds the lock past busy_timeout;
//     retrying later can succeed -> Unavailable. So are SQLITE_IOERR (an I/O error,
//     e.g. a disk gone) and SQLITE_CANTOPEN (a missing directory) -> Unavailable.
//   - SQLITE_FULL: disk full -> ResourceExhausted.
//   - SQLITE_CORRUPT, SQLITE_NOTADB: damaged or foreign file -> Internal (never retry).
//   - any other SQLite code -> Unknown.
func sqliteErrorCode(err error) (hub.ErrorCode, bool) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return 0, false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
		return hub.Unavailable, true
	case sqlite3.SQLITE_FULL:
		return hub.ResourceExhausted, true
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return hub.Internal, true
	}
	return hub.Unknown, true
}

// No index on the pending list's owner (on PostgreSQL either): every delivery and ack
// writes the PEL, while only a consumer's restart (re-reading its own pending entries)
// and XPENDING's consumer filter read it by owner, over a list bounded by the work in
// flight. One B-tree per PEL write instead of two was worth a third of the consumer's
// CPU. WITHOUT ROWID: the primary key is the storage order.
var ddlSQLite = []string{
	`CREATE TABLE IF NOT EXISTS kdb_streams (
		id INTEGER PRIMARY KEY,
		name TEXT NOT NULL UNIQUE,
		last_ms INTEGER NOT NULL DEFAULT 0, last_seq INTEGER NOT NULL DEFAULT 0,
		first_ms INTEGER NOT NULL DEFAULT 0, first_seq INTEGER NOT NULL DEFAULT 0,
		length INTEGER NOT NULL DEFAULT 0,
		entries_added INTEGER NOT NULL DEFAULT 0,
		maxdel_ms INTEGER NOT NULL DEFAULT 0, maxdel_seq INTEGER NOT NULL DEFAULT 0)`,
	`CREATE TABLE IF NOT EXISTS kdb_entries (
		sid INTEGER NOT NULL, ms INTEGER NOT NULL, seq INTEGER NOT NULL, fields BLOB NOT NULL,
		PRIMARY KEY (sid, ms, seq)) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS kdb_groups (
		sid INTEGER NOT NULL, name TEXT NOT NULL,
		last_ms INTEGER NOT NULL, last_seq INTEGER NOT NULL, entries_read INTEGER,
		PRIMARY KEY (sid, name)) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS kdb_consumers (
		sid INTEGER NOT NULL, grp TEXT NOT NULL, name TEXT NOT NULL,
		seen_time INTEGER NOT NULL, active_time INTEGER NOT NULL,
		PRIMARY KEY (sid, grp, name)) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS kdb_pending (
		sid INTEGER NOT NULL, grp TEXT NOT NULL, ms INTEGER NOT NULL, seq INTEGER NOT NULL,
		consumer TEXT NOT NULL, delivery_time INTEGER NOT NULL, delivery_count INTEGER NOT NULL,
		PRIMARY KEY (sid, grp, ms, seq)) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS kdb_pending_runs (
		sid INTEGER NOT NULL, grp TEXT NOT NULL, last_ms INTEGER NOT NULL, last_seq INTEGER NOT NULL,
		first_ms INTEGER NOT NULL, first_seq INTEGER NOT NULL,
		consumer TEXT NOT NULL, delivery_time INTEGER NOT NULL, n INTEGER NOT NULL, ids BLOB NOT NULL,
		PRIMARY KEY (sid, grp, last_ms, last_seq)) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS kdb_keys (
		name TEXT PRIMARY KEY, value BLOB NOT NULL, expires_at INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID`,
}

var _ dialect = (*sqliteDialect)(nil)
