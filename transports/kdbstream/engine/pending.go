package engine

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"sort"
	"time"
)

// XAck mirrors XACK and returns how many ids were pending (and no longer are). A
// missing stream or group acknowledges nothing, as in Redis.
func (e *Engine) XAck(ctx context.Context, stream, grp string, ids ...string) (int64, error) {
	parsed := make([]ID, 0, len(ids))
	for _, s := range ids {
		id, err := ParseStrictID(s)
		if err != nil {
			return 0, err
		}
		parsed = append(parsed, id)
	}
	var n int64
	err := e.inTxRelaxed(ctx, func(tx *sql.Tx) error {
		n = 0
		s, err := e.lockStream(ctx, tx, stream, false)
		if err != nil || s == nil {
			return err
		}
		n, err = e.deletePending(ctx, tx, s.sid, grp, parsed)
		return err
	})
	return n, err
}

// deletePending removes ids from a group's PEL and returns XACK's count (each id that
// was pending, duplicates once): first from the runs that hold them (pel_runs.go),
// then the rest from the rows with constant statements: no per-call parsing, one
// round trip per chunk (the dialect's: two unnest()ed arrays on PostgreSQL, a VALUES
// list of power-of-two length on SQLite).
func (e *Engine) deletePending(ctx context.Context, tx *sql.Tx, sid int64, grp string, ids []ID) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	n, rest, err := e.ackRuns(ctx, tx, sid, grp, ids)
	if err != nil || len(rest) == 0 {
		return n, err
	}
	m, err := e.d.deletePending(ctx, tx, sid, grp, rest)
	return n + m, err
}

// PendingSummary is XPENDING's summary form.
type PendingSummary struct {
	Count     int64
	Min, Max  ID
	Consumers []ConsumerPending // sorted by name, only consumers with pending entries
}

// ConsumerPending is one consumer's pending count.
type ConsumerPending struct {
	Name  string
	Count int64
}

// XPendingSummary mirrors XPENDING <stream> <group>. It reads the rows and the runs
// (pel_runs.go) as they are, without turning runs into rows: monitoring asks it often.
func (e *Engine) XPendingSummary(ctx context.Context, stream, grp string) (PendingSummary, error) {
	var ps PendingSummary
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		ps = PendingSummary{}
		s, _, err := e.lockGroup(ctx, tx, stream, grp, "")
		if err != nil {
			return err
		}
		rows, err := e.query(ctx, tx, `SELECT consumer, SUM(k) FROM (
				SELECT consumer, COUNT(*) AS k FROM kdb_pending WHERE sid = ? AND grp = ? GROUP BY consumer
				UNION ALL
				SELECT consumer, SUM(n) AS k FROM kdb_pending_runs WHERE sid = ? AND grp = ? GROUP BY consumer
			) c GROUP BY consumer`, s.sid, grp, s.sid, grp)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c ConsumerPending
			if err := rows.Scan(&c.Name, &c.Count); err != nil {
				return err
			}
			ps.Count += c.Count
			ps.Consumers = append(ps.Consumers, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		// Byte order, like Redis's rax (SQL collations may differ).
		sort.Slice(ps.Consumers, func(i, j int) bool { return ps.Consumers[i].Name < ps.Consumers[j].Name })
		if ps.Count == 0 {
			return nil
		}
		// The lowest and highest pending ids: of the rows, and of the runs (their first
		// and last ids are pending ones).
		ends := []ID{}
		for _, q := range []string{
			`SELECT ms, seq FROM kdb_pending WHERE sid = ? AND grp = ? ORDER BY ms, seq LIMIT 1`,
			`SELECT ms, seq FROM kdb_pending WHERE sid = ? AND grp = ? ORDER BY ms DESC, seq DESC LIMIT 1`,
			`SELECT first_ms, first_seq FROM kdb_pending_runs WHERE sid = ? AND grp = ? ORDER BY last_ms, last_seq LIMIT 1`,
			`SELECT last_ms, last_seq FROM kdb_pending_runs WHERE sid = ? AND grp = ? ORDER BY last_ms DESC, last_seq DESC LIMIT 1`,
		} {
			var id ID
			err := e.queryRow(ctx, tx, q, s.sid, grp).Scan(&id.Ms, &id.Seq)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			ends = append(ends, id)
		}
		ps.Min, ps.Max = slices.MinFunc(ends, ID.Cmp), slices.MaxFunc(ends, ID.Cmp)
		return nil
	})
	return ps, err
}

// PendingEntry is one row of XPENDING's extended form.
type PendingEntry struct {
	ID         ID
	Consumer   string
	Idle       time.Duration
	Deliveries int64
}

// PendingQuery is XPENDING's extended form: [IDLE min] start end count [consumer].
type PendingQuery struct {
	MinIdle    time.Duration
	Start, End string // "-", "+", "(id", id
	Count      int64
	Consumer   string // "" = all
}

// XPending mirrors XPENDING's extended form. It reads the pending runs in place, as
// the summary does: monitoring and the XPENDING-then-XCLAIM recovery loop of older
// clients ask it often, and turning every batch in flight into rows would cost more
// than the answer.
func (e *Engine) XPending(ctx context.Context, stream, grp string, pq PendingQuery) ([]PendingEntry, error) {
	start, _, err := parseRangeStart(pq.Start)
	if err != nil {
		return nil, err
	}
	end, _, err := parseRangeEnd(pq.End)
	if err != nil {
		return nil, err
	}
	var out []PendingEntry
	err = e.inTx(ctx, func(tx *sql.Tx) error {
		out = []PendingEntry{}
		s, _, err := e.lockGroup(ctx, tx, stream, grp, "")
		if err != nil {
			return err
		}
		if pq.Count <= 0 || end.Less(start) {
			return nil
		}
		now := e.nowMs()
		q := `SELECT ms, seq, consumer, delivery_time, delivery_count FROM kdb_pending
			WHERE sid = ? AND grp = ? AND (ms, seq) >= (?, ?) AND (ms, seq) <= (?, ?)`
		args := []any{s.sid, grp, start.Ms, start.Seq, end.Ms, end.Seq}
		filter, fargs := "", []any{}
		if pq.Consumer != "" {
			filter += ` AND consumer = ?`
			fargs = append(fargs, pq.Consumer)
		}
		if pq.MinIdle > 0 {
			filter += ` AND delivery_time <= ?`
			fargs = append(fargs, now-pq.MinIdle.Milliseconds())
		}
		q += filter + ` ORDER BY ms, seq LIMIT ?`
		args = append(append(args, fargs...), pq.Count)
		rows, err := e.query(ctx, tx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var fromRows []PendingEntry
		for rows.Next() {
			var p PendingEntry
			var dt int64
			if err := rows.Scan(&p.ID.Ms, &p.ID.Seq, &p.Consumer, &dt, &p.Deliveries); err != nil {
				return err
			}
			p.Idle = time.Duration(max(now-dt, 0)) * time.Millisecond
			fromRows = append(fromRows, p)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		// The runs' ids in the range, read in place (pel_runs.go): runs are disjoint and
		// ordered, so only the first and the last run overlapping the range can have no
		// id in it, and Count+2 runs give Count ids when there are that many. A run's
		// owner and delivery time are its ids', their delivery count 1.
		runs, err := e.selectRuns(ctx, tx, s.sid, grp, ` AND (last_ms, last_seq) >= (?, ?)
			AND (first_ms, first_seq) <= (?, ?)`+filter+` ORDER BY last_ms, last_seq LIMIT ?`,
			append(append([]any{start.Ms, start.Seq, end.Ms, end.Seq}, fargs...), min(pq.Count, math.MaxInt64-2)+2)...)
		if err != nil {
			return err
		}
		fromRuns := runIDsIn(runs, start, end, pq.Count, func(_ int, r *pendingRun, id ID) PendingEntry {
			return PendingEntry{ID: id, Consumer: r.consumer, Idle: time.Duration(max(now-r.deliveryMs, 0)) * time.Millisecond, Deliveries: 1}
		})
		out = mergeByID(fromRows, fromRuns, func(p PendingEntry) ID { return p.ID }, pq.Count)
		return nil
	})
	return out, err
}
