package engine

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// stream is a stream's metadata row (Redis's stream struct minus the radix tree).
type stream struct {
	sid    int64
	name   string
	last   ID // last generated id
	first  ID // first entry id, 0-0 when empty
	maxDel ID // max_deleted_entry_id (XDEL only, as in Redis 7.0)
	length int64
	added  int64 // entries_added
}

// lockStream loads a stream's row and locks it for the transaction (the dialect's
// lockRow: FOR UPDATE on PostgreSQL; SQLite's single connection already serialises).
// create makes a missing stream (MKSTREAM); otherwise a missing stream returns nil, nil.
func (e *Engine) lockStream(ctx context.Context, tx *sql.Tx, name string, create bool) (*stream, error) {
	return e.lockStreamQ(ctx, tx, e.selectStreamQ, name, create)
}

// lockStreamQ is lockStream with the locking query q (selectStreamQ or noWaitStreamQ).
func (e *Engine) lockStreamQ(ctx context.Context, tx *sql.Tx, q, name string, create bool) (*stream, error) {
	return lockOrCreate(ctx, sqlRowTx{e, tx}, q, name, create, e.nowMs())
}

// rowTx is what locking or creating a stream needs of a transaction, so the engine's
// *sql.Tx (through the dialect's statements) and the ingress's pgx.Tx
// (AppendPgTx) share one path. Queries are written with ? placeholders.
type rowTx interface {
	queryRow(ctx context.Context, q string, args ...any) interface{ Scan(dest ...any) error }
	exec(ctx context.Context, q string, args ...any) error
	isNoRows(err error) bool
}

// sqlRowTx is a rowTx on the engine's own transaction.
type sqlRowTx struct {
	e  *Engine
	tx *sql.Tx
}

func (t sqlRowTx) queryRow(ctx context.Context, q string, args ...any) interface{ Scan(dest ...any) error } {
	return t.e.queryRow(ctx, t.tx, q, args...)
}

func (t sqlRowTx) exec(ctx context.Context, q string, args ...any) error {
	_, err := t.e.exec(ctx, t.tx, q, args...)
	return err
}

func (sqlRowTx) isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// lockOrCreate loads and locks (lockQ) the stream's row; create makes a missing stream
// first, after the one-keyspace check (a live string key of that name is WRONGTYPE,
// keys.go; only a stream's creation pays for that look). A missing stream without
// create is nil, nil.
func lockOrCreate(ctx context.Context, t rowTx, lockQ, name string, create bool, now int64) (*stream, error) {
	for attempt := 0; ; attempt++ {
		s := &stream{name: name}
		err := s.scan(t.queryRow(ctx, lockQ, name))
		if err == nil {
			return s, nil
		}
		if !t.isNoRows(err) {
			return nil, err
		}
		if !create || attempt > 0 {
			return nil, nil
		}
		var live bool
		if err := t.queryRow(ctx, liveKeySQL, name, now).Scan(&live); err != nil {
			return nil, err
		}
		if live {
			return nil, errWrongType
		}
		if err := t.exec(ctx, `INSERT INTO kdb_streams (name) VALUES (?) ON CONFLICT (name) DO NOTHING`, name); err != nil {
			return nil, err
		}
	}
}

// liveKeySQL reports whether a live string key has the name.
const liveKeySQL = `SELECT EXISTS (SELECT 1 FROM kdb_keys WHERE name = ? AND (expires_at = 0 OR expires_at > ?))`

// selectStreamSQL reads one stream row; the engine appends the dialect's lockRow once
// (Engine.selectStreamQ).
const selectStreamSQL = `SELECT id, last_ms, last_seq, first_ms, first_seq, maxdel_ms, maxdel_seq, length, entries_added
		FROM kdb_streams WHERE name = ?`

// pgLockStreamSQL is selectStreamSQL locking the row, as PostgreSQL paths on a pgx
// connection or transaction run it (appendPipelined, AppendPgTx).
var pgLockStreamSQL = strings.Replace(selectStreamSQL, "?", "$1", 1) + " FOR UPDATE"

// scan reads a row of selectStreamSQL's columns into s.
func (s *stream) scan(r interface{ Scan(dest ...any) error }) error {
	return r.Scan(&s.sid, &s.last.Ms, &s.last.Seq, &s.first.Ms, &s.first.Seq, &s.maxDel.Ms, &s.maxDel.Seq, &s.length, &s.added)
}

// selectStream is lockStream without creating: a missing stream is nil, nil.
func (e *Engine) selectStream(ctx context.Context, tx *sql.Tx, name string) (*stream, error) {
	return e.lockStreamQ(ctx, tx, e.selectStreamQ, name, false)
}

// saveStreamSQL writes a stream row; its arguments are rowValues.
const saveStreamSQL = `UPDATE kdb_streams SET last_ms = ?, last_seq = ?, first_ms = ?, first_seq = ?,
		maxdel_ms = ?, maxdel_seq = ?, length = ?, entries_added = ? WHERE id = ?`

// rowValues are saveStreamSQL's arguments.
func (s *stream) rowValues() []any {
	return []any{s.last.Ms, s.last.Seq, s.first.Ms, s.first.Seq, s.maxDel.Ms, s.maxDel.Seq, s.length, s.added, s.sid}
}

// saveStream writes s's row after a change that appended nothing (see the dialect's
// saveAppended for appends: it also wakes readers in other processes).
func (e *Engine) saveStream(ctx context.Context, tx *sql.Tx, s *stream) error {
	_, err := e.exec(ctx, tx, saveStreamSQL, s.rowValues()...)
	return err
}

// refreshFirst recomputes the first entry id after deletions.
func (e *Engine) refreshFirst(ctx context.Context, tx *sql.Tx, s *stream) error {
	if s.length == 0 {
		s.first = ID{}
		return nil
	}
	return e.queryRow(ctx, tx, `SELECT ms, seq FROM kdb_entries WHERE sid = ? ORDER BY ms, seq LIMIT 1`, s.sid).
		Scan(&s.first.Ms, &s.first.Seq)
}

// entryFields returns an entry's fields, or nil, false when it was deleted.
func (e *Engine) entryFields(ctx context.Context, tx *sql.Tx, sid int64, id ID) ([]string, bool, error) {
	var b []byte
	err := e.queryRow(ctx, tx, `SELECT fields FROM kdb_entries WHERE sid = ? AND ms = ? AND seq = ?`, sid, id.Ms, id.Seq).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	f, err := decodeFields(b)
	return f, err == nil, err
}

// Entry is a stream entry as XRANGE returns it.
type Entry struct {
	ID     ID
	Fields []string // flat field, value pairs; nil for a pending entry deleted from the stream
}

func (e *Engine) scanEntries(rows *sql.Rows) ([]Entry, error) {
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var en Entry
		var b sql.RawBytes // the driver's bytes: decodeFields copies them once, into one string
		if err := rows.Scan(&en.ID.Ms, &en.ID.Seq, &b); err != nil {
			return nil, err
		}
		f, err := decodeFields(b)
		if err != nil {
			return nil, err
		}
		en.Fields = f
		out = append(out, en)
	}
	return out, rows.Err()
}

// hasTombstones is Redis's streamRangeHasTombstones(s, start, NULL).
func (s *stream) hasTombstones(start ID) bool {
	if s.length == 0 || s.maxDel.IsZero() {
		return false
	}
	if s.first.Cmp(s.maxDel) > 0 {
		return false
	}
	return start.Cmp(s.maxDel) <= 0
}

// estimateRead is Redis's streamEstimateDistanceFromFirstEverEntry; -1 means unknown.
func (s *stream) estimateRead(id ID) int64 {
	if s.added == 0 {
		return 0
	}
	if s.length == 0 && id.Cmp(s.last) < 1 {
		return s.added
	}
	switch c := id.Cmp(s.last); {
	case c == 0:
		return s.added
	case c > 0:
		return -1
	}
	if s.maxDel.IsZero() || s.maxDel.Cmp(s.first) < 0 {
		switch id.Cmp(s.first) {
		case -1:
			return s.added - s.length
		case 0:
			return s.added - s.length + 1
		}
	}
	return -1
}

// lag is Redis's streamReplyWithCGLag; ok false means nil.
func (s *stream) lag(g *group) (int64, bool) {
	if s.added == 0 {
		return 0, true
	}
	if g.entriesRead >= 0 && !s.hasTombstones(g.last) {
		return s.added - g.entriesRead, true
	}
	if r := s.estimateRead(g.last); r >= 0 {
		return s.added - r, true
	}
	return 0, false
}

// entryExists reports whether id is still in the stream.
func (e *Engine) entryExists(ctx context.Context, tx *sql.Tx, sid int64, id ID) (bool, error) {
	var one int
	err := e.queryRow(ctx, tx, `SELECT 1 FROM kdb_entries WHERE sid = ? AND ms = ? AND seq = ?`, sid, id.Ms, id.Seq).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
