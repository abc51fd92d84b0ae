package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/schemaver"
)

// postgresDialect runs the engine on PostgreSQL (pgx v5 under database/sql), in a
// schema of its own, for several processes sharing streams. What is particular to it:
//   - a pool of connections, transactions side by side, each command locking its
//     stream's row (SELECT ... FOR UPDATE) so commands on one stream are serialised
//     across processes as Redis's single thread serialises them;
//   - $n placeholders (rebind, cached per text); pgx prepares and caches statements
//     by text, so stmt only rewrites the text;
//   - consumer bookkeeping commits with synchronous_commit off, on a pool of its own
//     whose sessions have it off (relaxed): no SET LOCAL round trip per transaction;
//   - appends NOTIFY the schema's channel in the statement that saves the stream row,
//     and a LISTEN connection relays other processes' NOTIFYs to local readers
//     (dialect_postgres_listen.go); blocked readers never poll: every (re)connection
//     of the listener wakes them all once, which covers NOTIFYs lost while it was down;
//   - the usual publisher batch commits in one round trip, or two (appendFast,
//     dialect_postgres_append.go);
//   - XACK sends its ids as two arrays, unnest()ed, in one statement.
type postgresDialect struct {
	cfg     Config
	waiters *waiters
	channel string // NOTIFY channel of the schema's streams
	db      *sql.DB
	relaxed *sql.DB  // consumer bookkeeping's pool: sessions with synchronous_commit off
	queries sync.Map // '?' text -> $n text

	heads map[string]stream // the committer's last known stream rows (appendFast only)
	stop  func()            // stops the LISTEN connection
}

func newPostgres(cfg Config, w *waiters) *postgresDialect {
	return &postgresDialect{cfg: cfg, waiters: w, channel: notifyChannel(cfg.Schema)}
}

func (d *postgresDialect) driver() string { return DriverPostgres }

// open creates the schema (on a connection of its own: the pool's connections have it
// as search_path), opens the pool, creates the tables and starts the listener.
func (d *postgresDialect) open(ctx context.Context) (*sql.DB, error) {
	cc, err := pgx.ParseConfig(d.cfg.DSN)
	if err != nil {
		return nil, hub.Wrap(hub.InvalidArgument, err)
	}
	boot, err := pgx.ConnectConfig(ctx, cc.Copy())
	if err != nil {
		return nil, hub.Wrap(hub.Unavailable, err)
	}
	// Look first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege on the database
	// even when the schema exists, which a role given only the schema may not have.
	var exists bool
	err = boot.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", d.cfg.Schema).Scan(&exists)
	if err == nil && !exists {
		if p := schemaver.Checking(ctx); p != nil {
			p.Add("schema " + d.cfg.Schema) // a check run (`hub migrate schema --check`) creates nothing
		} else {
			_, err = boot.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{d.cfg.Schema}.Sanitize())
		}
	}
	boot.Close(ctx)
	if err != nil && !isUniqueViolation(err) {
		return nil, classify(err)
	}
	cc.RuntimeParams["search_path"] = d.cfg.Schema
	db := stdlib.OpenDB(*cc)
	db.SetMaxOpenConns(16)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, classify(err)
	}
	d.db = db
	// The relaxed pool: a session setting instead of SET LOCAL in each transaction,
	// which was one more round trip per XREADGROUP, XACK and claim. Its idle
	// connections are kept (a consumer's transactions come one after the other) and
	// closed after a minute unused.
	rc := cc.Copy()
	rc.RuntimeParams["synchronous_commit"] = "off"
	d.relaxed = stdlib.OpenDB(*rc)
	d.relaxed.SetMaxOpenConns(16)
	d.relaxed.SetMaxIdleConns(8)
	d.relaxed.SetConnMaxIdleTime(time.Minute)
	lctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go d.listen(lctx, cc.Copy(), done)
	d.stop = func() { cancel(); <-done }
	// Processes starting together create the same objects at once and can collide on
	// the catalog (23505 on pg_type, 42710 duplicate type, 42P07 duplicate relation,
	// whichever the race hits) even with IF NOT EXISTS; the other's object is committed
	// by the time the error is raised, so schemaver's second try sees it. A process
	// finding this version of the DDL recorded runs none (a role that does not own the
	// tables starts).
	if err := schemaver.Apply(ctx, db, schemaver.Set{Name: "kdbstream.engine", Statements: ddlPostgres}); err != nil {
		db.Close()
		d.close()
		var he *hub.Error
		if errors.As(err, &he) {
			return nil, err
		}
		return nil, classify(fmt.Errorf("kdbstream: schema: %w", err))
	}
	return db, nil
}

func (d *postgresDialect) close() {
	if d.stop != nil {
		d.stop()
		d.stop = nil
	}
	if d.relaxed != nil {
		_ = d.relaxed.Close()
		d.relaxed = nil
	}
}

// rebind turns '?' into $1, $2, ...; the engine's texts are constants or a bounded set
// (multi-row INSERTs up to insertChunk rows), so the cache stays small.
func (d *postgresDialect) rebind(s string) string {
	if v, ok := d.queries.Load(s); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	d.queries.Store(s, b.String())
	return b.String()
}

func (d *postgresDialect) lockRow() string { return " FOR UPDATE" }

// begin: a relaxed transaction commits without waiting for its WAL flush. A crash of
// the server's machine can lose the last such commits; the entries involved are then
// delivered again, which at-least-once delivery allows.
func (d *postgresDialect) begin(ctx context.Context, relaxed bool) (*sql.Tx, error) {
	if relaxed {
		return d.relaxed.BeginTx(ctx, nil)
	}
	return d.db.BeginTx(ctx, nil)
}

func (d *postgresDialect) end(context.Context) {}

func (d *postgresDialect) stmt(_ context.Context, _ *sql.Tx, q string) (stmt, error) {
	return stmt{text: d.rebind(q)}, nil
}

func (d *postgresDialect) stmtNoTx(_ context.Context, q string) (stmt, error) {
	return stmt{text: d.rebind(q)}, nil
}

// saveAppended queues the NOTIFY that wakes blocked readers in other processes (sent
// at commit) in the statement that saves the row: no round trip of its own.
func (d *postgresDialect) saveAppended(ctx context.Context, tx *sql.Tx, s *stream) error {
	_, err := tx.ExecContext(ctx, `WITH u AS (UPDATE kdb_streams SET last_ms = $1, last_seq = $2, first_ms = $3, first_seq = $4,
		maxdel_ms = $5, maxdel_seq = $6, length = $7, entries_added = $8 WHERE id = $9 RETURNING name)
		SELECT pg_notify($10, name) FROM u`,
		s.last.Ms, s.last.Seq, s.first.Ms, s.first.Seq, s.maxDel.Ms, s.maxDel.Seq, s.length, s.added, s.sid, d.channel)
	return err
}

// appendRows writes the usual publisher batch (up to insertChunk rows) as one
// statement: entries, stream row and NOTIFY, one round trip fewer per commit.
func (d *postgresDialect) appendRows(ctx context.Context, tx *sql.Tx, rows []pendingRow, s *stream) error {
	if len(rows) == 0 || len(rows) > insertChunk {
		if err := insertEntries(ctx, d, tx, rows); err != nil {
			return err
		}
		return d.saveAppended(ctx, tx, s)
	}
	q, args := d.insertAndSaveSQL(rows, s)
	_, err := tx.ExecContext(ctx, q, args...)
	return err
}

// deletePending sends the ids as two arrays, unnest()ed: one constant statement
// whatever their number.
func (d *postgresDialect) deletePending(ctx context.Context, tx *sql.Tx, sid int64, grp string, ids []ID) (int64, error) {
	ms := make([]int64, len(ids))
	seq := make([]int64, len(ids))
	for i, id := range ids {
		ms[i], seq[i] = id.Ms, id.Seq
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM kdb_pending WHERE sid = $1 AND grp = $2
		AND (ms, seq) IN (SELECT * FROM unnest($3::bigint[], $4::bigint[]))`, sid, grp, ms, seq)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// isUniqueViolation: concurrent CREATE ... IF NOT EXISTS on PostgreSQL can still race
// on the catalog (23505 on its unique index, or 42P06 duplicate schema); the object
// exists then, which is what we want.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P06")
}

// isLockNotAvailable: a NOWAIT lock found the row held (55P03).
func isLockNotAvailable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
}

// postgresErrorCode is PostgreSQL's table (SQLSTATE codes, postgresql.org/docs/current/errcodes-appendix.html):
//   - class 08 (connection exception), 57P01-03 (admin shutdown, crash shutdown,
//     cannot connect now), 40001/40P01 (serialization failure, deadlock detected):
//     retrying can succeed -> Unavailable;
//   - class 53 (insufficient resources: disk full, out of memory, too many
//     connections) -> ResourceExhausted;
//   - class 42 (syntax error or access rule violation: a bug or a wrong schema) ->
//     Internal;
//   - any other SQLSTATE -> Unknown;
//   - no server reply but pgconn.SafeToRetry (the request never reached the server)
//     -> Unavailable.
func postgresErrorCode(err error) (hub.ErrorCode, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03",
			pe.Code == "40001", pe.Code == "40P01":
			return hub.Unavailable, true
		case strings.HasPrefix(pe.Code, "53"):
			return hub.ResourceExhausted, true
		case strings.HasPrefix(pe.Code, "42"):
			return hub.Internal, true
		}
		return hub.Unknown, true
	}
	if pgconn.SafeToRetry(err) {
		return hub.Unavailable, true
	}
	return 0, false
}

var ddlPostgres = []string{
	`CREATE TABLE IF NOT EXISTS kdb_streams (
		id BIGSERIAL PRIMARY KEY,
		name TEXT NOT NULL UNIQUE,
		last_ms BIGINT NOT NULL DEFAULT 0, last_seq BIGINT NOT NULL DEFAULT 0,
		first_ms BIGINT NOT NULL DEFAULT 0, first_seq BIGINT NOT NULL DEFAULT 0,
		length BIGINT NOT NULL DEFAULT 0,
		entries_added BIGINT NOT NULL DEFAULT 0,
		maxdel_ms BIGINT NOT NULL DEFAULT 0, maxdel_seq BIGINT NOT NULL DEFAULT 0)`,
	`CREATE TABLE IF NOT EXISTS kdb_entries (
		sid BIGINT NOT NULL, ms BIGINT NOT NULL, seq BIGINT NOT NULL, fields BYTEA NOT NULL,
		PRIMARY KEY (sid, ms, seq))`,
	`CREATE TABLE IF NOT EXISTS kdb_groups (
		sid BIGINT NOT NULL, name TEXT NOT NULL,
		last_ms BIGINT NOT NULL, last_seq BIGINT NOT NULL, entries_read BIGINT,
		PRIMARY KEY (sid, name))`,
	`CREATE TABLE IF NOT EXISTS kdb_consumers (
		sid BIGINT NOT NULL, grp TEXT NOT NULL, name TEXT NOT NULL,
		seen_time BIGINT NOT NULL, active_time BIGINT NOT NULL,
		PRIMARY KEY (sid, grp, name))`,
	`CREATE TABLE IF NOT EXISTS kdb_pending (
		sid BIGINT NOT NULL, grp TEXT NOT NULL, ms BIGINT NOT NULL, seq BIGINT NOT NULL,
		consumer TEXT NOT NULL, delivery_time BIGINT NOT NULL, delivery_count BIGINT NOT NULL,
		PRIMARY KEY (sid, grp, ms, seq))`,
	`CREATE TABLE IF NOT EXISTS kdb_pending_runs (
		sid BIGINT NOT NULL, grp TEXT NOT NULL, last_ms BIGINT NOT NULL, last_seq BIGINT NOT NULL,
		first_ms BIGINT NOT NULL, first_seq BIGINT NOT NULL,
		consumer TEXT NOT NULL, delivery_time BIGINT NOT NULL, n BIGINT NOT NULL, ids BYTEA NOT NULL,
		PRIMARY KEY (sid, grp, last_ms, last_seq))`,
	`CREATE TABLE IF NOT EXISTS kdb_keys (
		name TEXT PRIMARY KEY, value BYTEA NOT NULL, expires_at BIGINT NOT NULL DEFAULT 0)`,
	`CREATE TABLE IF NOT EXISTS kdb_scan_cursors (
		id BIGINT PRIMARY KEY, after TEXT NOT NULL, created_ms BIGINT NOT NULL)`,
}

var _ dialect = (*postgresDialect)(nil)
