package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/koder/eventhub/hub"
)

// openSQLite opens the file in WAL mode with one connection. One connection because
// SQLite has one writer anyway: a pool would only turn contention into SQLITE_BUSY
// retries, while a single connection queues commands in database/sql (the same choice
// River's SQLite driver documents). Readers wait too; XRANGE is not a hot path.
func (e *Engine) openSQLite(ctx context.Context) error {
	path := strings.TrimPrefix(e.cfg.DSN, "file:")
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+strings.ToUpper(e.cfg.Synchronous)+")")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", DefaultBusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(OFF)")
	q.Add("_pragma", "cache_size(-32768)") // 32 MiB: the hot tail of the stream and the PEL stay cached
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return hub.Wrap(hub.InvalidArgument, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return classify(err)
	}
	e.db = db
	return nil
}

func (e *Engine) openPostgres(ctx context.Context) error {
	cc, err := pgx.ParseConfig(e.cfg.DSN)
	if err != nil {
		return hub.Wrap(hub.InvalidArgument, err)
	}
	boot, err := pgx.ConnectConfig(ctx, cc.Copy())
	if err != nil {
		return hub.Wrap(hub.Unavailable, err)
	}
	_, err = boot.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{e.cfg.Schema}.Sanitize())
	boot.Close(ctx)
	if err != nil && !isUniqueViolation(err) {
		return classify(err)
	}
	cc.RuntimeParams["search_path"] = e.cfg.Schema
	e.db = stdlib.OpenDB(*cc)
	e.db.SetMaxOpenConns(16)
	if err := e.db.PingContext(ctx); err != nil {
		e.db.Close()
		return classify(err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go e.listenPG(lctx, cc.Copy(), done)
	e.stopPG = func() { cancel(); <-done }
	return nil
}

// notifyChannel is the NOTIFY channel of this schema's streams; a hash keeps it under
// PostgreSQL's 63-byte identifier limit for long schema names.
func (e *Engine) notifyChannel() string {
	h := fnv.New64a()
	h.Write([]byte(e.cfg.Schema))
	return fmt.Sprintf("kdbstream_%016x", h.Sum64())
}

// No index on the pending list's owner: every delivery and ack writes the PEL, while
// only a consumer's restart (re-reading its own pending entries) and XPENDING's
// consumer filter read it by owner, over a list bounded by the work in flight. One
// B-tree per PEL write instead of two was worth a third of the consumer's CPU.
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
}

func (e *Engine) migrate(ctx context.Context) error {
	ddl := ddlSQLite
	if e.pg {
		ddl = ddlPostgres
	}
	for _, s := range ddl {
		if _, err := e.db.ExecContext(ctx, s); err != nil && !isUniqueViolation(err) {
			return classify(fmt.Errorf("kdbstream: schema: %w", err))
		}
	}
	return nil
}

// isUniqueViolation: concurrent CREATE ... IF NOT EXISTS on PostgreSQL can still race
// on the catalog's unique index (23505); the object exists then, which is what we want.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// dbCode is the private table from database errors to hub codes.
//   - SQLITE_BUSY/SQLITE_LOCKED (sqlite.org/rescode.html): another writer holds the
//     lock past busy_timeout; retrying later can succeed -> Unavailable.
//   - SQLITE_FULL, SQLITE_IOERR: disk full / I/O -> ResourceExhausted / Unavailable.
//   - SQLITE_CORRUPT, SQLITE_NOTADB -> Internal (never retry).
//   - PostgreSQL class 08 (connection exception), 57P01-03 (admin shutdown, cannot
//     connect now), 40001/40P01 (serialization failure, deadlock) -> Unavailable;
//     53xxx (insufficient resources) -> ResourceExhausted; 42xxx -> Internal.
//   - net errors and sql.ErrConnDone -> Unavailable.
func dbCode(err error) hub.ErrorCode {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
			return hub.Unavailable
		case sqlite3.SQLITE_FULL:
			return hub.ResourceExhausted
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return hub.Internal
		}
		return hub.Unknown
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03",
			pe.Code == "40001", pe.Code == "40P01":
			return hub.Unavailable
		case strings.HasPrefix(pe.Code, "53"):
			return hub.ResourceExhausted
		case strings.HasPrefix(pe.Code, "42"):
			return hub.Internal
		}
		return hub.Unknown
	}
	if errors.Is(err, sql.ErrConnDone) || pgconn.SafeToRetry(err) || isNetErr(err) {
		return hub.Unavailable
	}
	return hub.Unknown
}
