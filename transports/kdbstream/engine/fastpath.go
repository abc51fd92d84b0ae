package engine

import (
	"context"
	"database/sql"
	"errors"
)

// Fast paths: the two commands consumers issue in a loop, XREADGROUP ">" (woken by
// every append, most wakeups find nothing for this consumer) and XAUTOCLAIM (every
// claim interval, most scans find nothing idle), first look without locking the
// stream. When there is nothing to do, the reply is the one Redis gives at that
// instant and no write transaction (and no lock on the stream row) is taken; otherwise
// the locked path runs and decides.

// groupCursor returns the stream's last id and the group's last delivered id, ok false
// when either is missing (the locked path then reports NOGROUP).
func (e *Engine) groupCursor(ctx context.Context, stream, grp string) (last, delivered ID, ok bool, err error) {
	if err := e.ensureReady(ctx); err != nil {
		return last, delivered, false, err
	}
	err = e.rowNoTx(ctx, `SELECT s.last_ms, s.last_seq, g.last_ms, g.last_seq FROM kdb_streams s
		JOIN kdb_groups g ON g.sid = s.id AND g.name = ? WHERE s.name = ?`, grp, stream).
		Scan(&last.Ms, &last.Seq, &delivered.Ms, &delivered.Seq)
	if errors.Is(err, sql.ErrNoRows) {
		return last, delivered, false, nil
	}
	return last, delivered, err == nil, classify(err)
}

// nothingNew reports whether a ">" read would certainly return nothing.
func (e *Engine) nothingNew(ctx context.Context, stream, grp string) bool {
	last, delivered, ok, err := e.groupCursor(ctx, stream, grp)
	return err == nil && ok && !delivered.Less(last)
}

// idleScan answers XAUTOCLAIM without locking when no pending entry from start on is
// claimable (idle enough) or dangling (its entry deleted): the reply is then the next
// cursor only. ok false means the locked path must run. One statement, since claimers
// run it every ClaimInterval whether or not there is work. A pending run from start on
// (a batch read and not yet acked, pel_runs.go) also sends it down the locked path,
// which merges the runs' ids into its scan as Redis would see them (claim.go): this
// statement cannot tell whether a run's entries still exist.
func (e *Engine) idleScan(ctx context.Context, stream, grp string, from ID, threshold, attempts int64) (next ID, ok bool) {
	if err := e.ensureReady(ctx); err != nil {
		return next, false
	}
	var groups, claimable int64
	var nms, nseq sql.NullInt64
	err := e.rowNoTx(ctx, `WITH s AS (SELECT id FROM kdb_streams WHERE name = ?),
		p AS (SELECT p.ms, p.seq, p.delivery_time, p.sid FROM kdb_pending p, s WHERE p.sid = s.id AND p.grp = ?
			AND (p.ms, p.seq) >= (?, ?))
		SELECT (SELECT COUNT(*) FROM kdb_groups g, s WHERE g.sid = s.id AND g.name = ?),
			(SELECT COUNT(*) FROM (SELECT 1 FROM p WHERE p.delivery_time <= ? OR NOT EXISTS
				(SELECT 1 FROM kdb_entries x WHERE x.sid = p.sid AND x.ms = p.ms AND x.seq = p.seq) LIMIT 1) c) +
			(SELECT COUNT(*) FROM (SELECT 1 FROM kdb_pending_runs r, s WHERE r.sid = s.id AND r.grp = ?
				AND (r.last_ms, r.last_seq) >= (?, ?) LIMIT 1) rc),
			(SELECT ms FROM p ORDER BY ms, seq LIMIT 1 OFFSET ?),
			(SELECT seq FROM p ORDER BY ms, seq LIMIT 1 OFFSET ?)`,
		stream, grp, from.Ms, from.Seq, grp, threshold, grp, from.Ms, from.Seq, attempts, attempts).Scan(&groups, &claimable, &nms, &nseq)
	if err != nil || groups == 0 || claimable > 0 {
		return next, false
	}
	if nms.Valid {
		next = ID{nms.Int64, nseq.Int64}
	}
	return next, true
}

// rowNoTx is a single-row read outside a transaction (a prepared statement on SQLite).
func (e *Engine) rowNoTx(ctx context.Context, q string, args ...any) row {
	st, err := e.d.stmtNoTx(ctx, q)
	if err != nil {
		return row{err: err}
	}
	return row{r: st.queryRowDB(ctx, e.db, args...)}
}
