package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The PostgreSQL append path of the usual publisher batch: every XADD to one stream,
// no NOMKSTREAM, no trim due, at most insertChunk entries. Other batches take the
// general path (applyAdds in a database/sql transaction: BEGIN, SELECT ... FOR UPDATE,
// INSERT + UPDATE + NOTIFY (appendRows), COMMIT, four round trips).
//
//  1. appendOptimistic: one round trip. The committer remembers each stream's row as
//     it left it (heads); the ids are computed from that copy and one autocommitted
//     statement writes the entries, the row and the NOTIFY, its UPDATE guarded by
//     "the row is still exactly the copy". Any other writer (another process, XDEL,
//     XTRIM, XGROUP SETID...) changes the row, the guard matches nothing, nothing is
//     written, and the batch goes on to step 2.
//  2. appendPipelined: two round trips. BEGIN with the row's SELECT ... FOR UPDATE in
//     one pgx pipeline, then the INSERT + UPDATE + NOTIFY statement with COMMIT in a
//     second (the ids depend on the locked row, so the halves cannot merge).
//
// Durability is that of the general path: each commit runs with the server's
// synchronous_commit (on) and the batch is answered after it. database/sql has no
// pipelining, hence the pgx connection under the pool's for step 2.

// appendFast runs steps 1 and 2; handled is false, with nothing committed, when the
// batch needs the general path.
func (d *postgresDialect) appendFast(ctx context.Context, reqs []*appendReq) (touched []string, handled bool, err error) {
	name, n := "", 0
	for _, r := range reqs {
		for _, a := range r.adds {
			if a.NoMkStream || (name != "" && a.Stream != name) {
				return nil, false, nil
			}
			name = a.Stream
			n++
		}
	}
	if n == 0 || n > insertChunk {
		delete(d.heads, name)
		return nil, false, nil
	}
	if d.heads == nil {
		d.heads = map[string]stream{}
	}
	if head, ok := d.heads[name]; ok {
		delete(d.heads, name) // re-set below only once a commit says what the row is
		s := head
		if rows, trim := assignIDs(&s, reqs, d.cfg.Now().UnixMilli()); !trim && len(rows) > 0 {
			q, args := d.guardedAppendSQL(rows, &head, &s)
			res, err := d.db.ExecContext(ctx, q, args...)
			if err != nil {
				return nil, true, err // ambiguous, as a failed COMMIT would be
			}
			if k, err := res.RowsAffected(); err == nil && k == 1 {
				d.heads[name] = s
				return []string{name}, true, nil
			}
		}
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, false, err
	}
	defer conn.Close()
	var s *stream
	err = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		s, err = d.appendPipelined(ctx, pc, name, reqs)
		if err != nil && !pc.IsClosed() {
			// The transaction's state is unknown: drop the connection rather than
			// return it to the pool mid-transaction (an uncommitted batch rolls back).
			_ = pc.Close(ctx)
		}
		return err
	})
	if err != nil || s == nil {
		return nil, err != nil, err
	}
	d.heads[name] = *s
	return []string{name}, true, nil
}

// appendPipelined is step 2. It returns the stream row as committed, or nil (and
// nothing committed) when the batch needs the general path.
func (d *postgresDialect) appendPipelined(ctx context.Context, pc *pgx.Conn, name string, reqs []*appendReq) (*stream, error) {
	var b pgx.Batch
	b.Queue("BEGIN")
	b.Queue(pgLockStreamSQL, name)
	br := pc.SendBatch(ctx, &b)
	s := &stream{name: name}
	_, err := br.Exec()
	if err == nil {
		err = s.scan(br.QueryRow())
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	missing := errors.Is(err, pgx.ErrNoRows)
	if err != nil && !missing {
		return nil, err
	}
	rows, trimNeeded := assignIDs(s, reqs, d.cfg.Now().UnixMilli())
	if missing || trimNeeded || len(rows) == 0 {
		_, err := pc.Exec(ctx, "ROLLBACK")
		return nil, err
	}
	q, args := d.insertAndSaveSQL(rows, s)
	b = pgx.Batch{}
	b.Queue(q, args...)
	b.Queue("COMMIT")
	return s, pc.SendBatch(ctx, &b).Close()
}

// guardedAppendSQL is step 1's statement: the UPDATE of the stream row from old to s,
// only if the row still equals old, and the entries' INSERT only if that UPDATE
// matched. It returns one row (the NOTIFY's) when it wrote, none when it did not.
func (d *postgresDialect) guardedAppendSQL(rows []pendingRow, old, s *stream) (string, []any) {
	var b strings.Builder
	args := make([]any, 0, 4*len(rows)+19)
	args = append(args, s.last.Ms, s.last.Seq, s.first.Ms, s.first.Seq, s.maxDel.Ms, s.maxDel.Seq, s.length, s.added, s.sid,
		old.last.Ms, old.last.Seq, old.first.Ms, old.first.Seq, old.maxDel.Ms, old.maxDel.Seq, old.length, old.added, d.channel)
	b.WriteString(`WITH u AS (UPDATE kdb_streams SET last_ms = $1, last_seq = $2, first_ms = $3, first_seq = $4,
		maxdel_ms = $5, maxdel_seq = $6, length = $7, entries_added = $8 WHERE id = $9
		AND last_ms = $10 AND last_seq = $11 AND first_ms = $12 AND first_seq = $13
		AND maxdel_ms = $14 AND maxdel_seq = $15 AND length = $16 AND entries_added = $17 RETURNING name),
	ins AS (INSERT INTO kdb_entries (sid, ms, seq, fields) SELECT v.* FROM (VALUES `)
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		k := len(args)
		fmt.Fprintf(&b, "($%d::bigint,$%d::bigint,$%d::bigint,$%d::bytea)", k+1, k+2, k+3, k+4)
		args = append(args, r.sid, r.id.Ms, r.id.Seq, r.fields)
	}
	b.WriteString(`) v WHERE EXISTS (SELECT 1 FROM u))
	SELECT name, pg_notify($18, name) FROM u`)
	return b.String(), args
}

// insertAndSaveSQL is appendRows' one statement: the entries' INSERT, the stream row's
// UPDATE and the NOTIFY.
func (d *postgresDialect) insertAndSaveSQL(rows []pendingRow, s *stream) (string, []any) {
	var b strings.Builder
	b.WriteString(`WITH ins AS (INSERT INTO kdb_entries (sid, ms, seq, fields) VALUES `)
	args := make([]any, 0, 4*len(rows)+10)
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "($%d,$%d,$%d,$%d)", 4*i+1, 4*i+2, 4*i+3, 4*i+4)
		args = append(args, r.sid, r.id.Ms, r.id.Seq, r.fields)
	}
	n := len(args)
	fmt.Fprintf(&b, `), u AS (UPDATE kdb_streams SET last_ms = $%d, last_seq = $%d, first_ms = $%d, first_seq = $%d,
		maxdel_ms = $%d, maxdel_seq = $%d, length = $%d, entries_added = $%d WHERE id = $%d RETURNING name)
		SELECT pg_notify($%d, name) FROM u`, n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8, n+9, n+10)
	args = append(args, s.last.Ms, s.last.Seq, s.first.Ms, s.first.Seq, s.maxDel.Ms, s.maxDel.Seq, s.length, s.added, s.sid, d.channel)
	return b.String(), args
}
