package engine

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// Pending runs. A consumer loop reads ">" in batches and acks each batch whole; with
// one pending-list row per entry, each entry cost a B-tree insert at the read and a
// delete at the ack, about half of the engine's read+ack time (measured: 6.7 µs per
// entry with the rows, 3.3 µs without, SQLite). So a ">" read that nothing already
// pending overlaps records its entries as one run: one row of kdb_pending_runs holding
// their ids (encodeRunIDs), the consumer and the delivery time, all with a delivery
// count of 1, which is what Redis's PEL holds for them. An XACK removes ids from the
// runs that hold them (deleting a run it empties, rewriting one it thins) before it
// deletes rows.
//
// Invariants, kept under the stream's row lock that every pending-list operation takes:
//   - an id is pending in at most one place: one run, or one kdb_pending row;
//   - a group's runs are disjoint and ordered (each holds ids above every id pending
//     when it was made), keyed by their last id;
//   - a run's ids are still pending with the run's consumer, delivery time and a
//     delivery count of 1.
//
// What reads pending entries reads the runs in place: XPENDING (both forms), XINFO's
// counts, and XAUTOCLAIM's scan, which takes out of their runs only the ids it claims
// or purges (claim.go). XCLAIM turns only the ids it names into rows
// (materializeRunIDs), a consumer's re-read of its own pending entries only the ones it
// returns (materializeFirstRunIDs); DELCONSUMER deletes the consumer's runs with its
// rows. materializeRuns, which turns all of a group's runs into rows, is left to a
// read whose entries overlap what is pending (addPending). Runs keep the ids of
// entries deleted from the stream, as rows do (Redis's KEEPREF).

// maxRunIDs is the most ids one run holds; a larger read becomes several runs. An
// XACK that thins a run decodes and rewrites it whole, so a client that acks entry by
// entry pays for the run's size at every ack: unbounded, a COUNT 2000 read acked one by
// one cost twice as much per entry as COUNT 100 (BenchmarkReadAckEachCount2000). 128
// keeps a run's ids in a quarter of a page, so a batch of 100 is still one row.
const maxRunIDs = 128

// encodeRunIDs encodes ascending ids: the first as two uvarints (ms, seq), each next
// one as the ms delta and then, when the ms is the same, the seq delta, else the seq.
// A batch of 100 ids of one millisecond takes about 200 bytes.
func encodeRunIDs(ids []ID) []byte {
	b := make([]byte, 0, 4+2*len(ids))
	prev := ID{}
	for i, id := range ids {
		switch {
		case i == 0:
			b = binary.AppendUvarint(b, uint64(id.Ms))
			b = binary.AppendUvarint(b, uint64(id.Seq))
		case id.Ms == prev.Ms:
			b = binary.AppendUvarint(b, 0)
			b = binary.AppendUvarint(b, uint64(id.Seq-prev.Seq))
		default:
			b = binary.AppendUvarint(b, uint64(id.Ms-prev.Ms))
			b = binary.AppendUvarint(b, uint64(id.Seq))
		}
		prev = id
	}
	return b
}

var errBadRun = errors.New("kdbstream: corrupt pending run")

// decodeRunIDs decodes encodeRunIDs's n ids.
func decodeRunIDs(b []byte, n int64) ([]ID, error) {
	if n < 0 || n > int64(len(b)) {
		return nil, errBadRun
	}
	out := make([]ID, 0, n)
	prev := ID{}
	for i := range n {
		a, k := binary.Uvarint(b)
		if k <= 0 || a > math.MaxInt64 {
			return nil, errBadRun
		}
		b = b[k:]
		c, k := binary.Uvarint(b)
		if k <= 0 || c > math.MaxInt64 {
			return nil, errBadRun
		}
		b = b[k:]
		id := ID{int64(a), int64(c)}
		if i > 0 {
			// The sums may wrap on a corrupt run; the order check below catches it.
			id.Ms = prev.Ms + int64(a)
			if a == 0 {
				id.Seq = prev.Seq + int64(c)
			}
			if !prev.Less(id) {
				return nil, errBadRun
			}
		}
		out = append(out, id)
		prev = id
	}
	if len(b) != 0 {
		return nil, errBadRun
	}
	return out, nil
}

// addPending records entries (ascending, just read by consumer at now, the group's
// last id before the read being prev) as pending: one run when nothing pending in the
// group has an id above prev, else rows through upsertPending (the group's last id was
// moved back, or XCLAIM FORCE made an entry pending ahead of it).
func (e *Engine) addPending(ctx context.Context, tx *sql.Tx, sid int64, grp, consumer string, now int64, prev ID, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	last := entries[len(entries)-1].ID
	var ahead bool
	if err := e.queryRow(ctx, tx, `SELECT EXISTS (SELECT 1 FROM kdb_pending WHERE sid = ? AND grp = ? AND (ms, seq) > (?, ?))
		OR EXISTS (SELECT 1 FROM kdb_pending_runs WHERE sid = ? AND grp = ? AND (last_ms, last_seq) > (?, ?))`,
		sid, grp, prev.Ms, prev.Seq, sid, grp, prev.Ms, prev.Seq).Scan(&ahead); err != nil {
		return err
	}
	if ahead {
		if err := e.materializeRuns(ctx, tx, sid, grp); err != nil {
			return err
		}
		return e.upsertPending(ctx, tx, sid, grp, consumer, now, prev, last)
	}
	ids := make([]ID, len(entries))
	for i, en := range entries {
		ids[i] = en.ID
	}
	for run := range slices.Chunk(ids, e.runIDs) {
		first, last := run[0], run[len(run)-1]
		if _, err := e.exec(ctx, tx, `INSERT INTO kdb_pending_runs (sid, grp, last_ms, last_seq, first_ms, first_seq, consumer, delivery_time, n, ids)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sid, grp, last.Ms, last.Seq, first.Ms, first.Seq, consumer, now, int64(len(run)), encodeRunIDs(run)); err != nil {
			return err
		}
	}
	return nil
}

// pendingRun is one row of kdb_pending_runs, its ids decoded.
type pendingRun struct {
	last       ID
	consumer   string
	deliveryMs int64
	ids        []ID
}

// selectRuns returns the runs of group grp of stream sid matching the extra condition
// and, after it, its arguments ("" for every run of the group).
func (e *Engine) selectRuns(ctx context.Context, tx *sql.Tx, sid int64, grp, cond string, args ...any) ([]pendingRun, error) {
	rows, err := e.query(ctx, tx, `SELECT last_ms, last_seq, consumer, delivery_time, n, ids FROM kdb_pending_runs
		WHERE sid = ? AND grp = ?`+cond, append([]any{sid, grp}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []pendingRun
	for rows.Next() {
		var r pendingRun
		var n int64
		var b []byte
		if err := rows.Scan(&r.last.Ms, &r.last.Seq, &r.consumer, &r.deliveryMs, &n, &b); err != nil {
			return nil, err
		}
		if r.ids, err = decodeRunIDs(b, n); err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// materializeRuns turns the runs of group grp of stream sid into kdb_pending rows.
func (e *Engine) materializeRuns(ctx context.Context, tx *sql.Tx, sid int64, grp string) error {
	runs, err := e.selectRuns(ctx, tx, sid, grp, "")
	if err != nil || len(runs) == 0 {
		return err
	}
	for _, r := range runs {
		for _, id := range r.ids {
			// DO NOTHING: a row already there (which the invariants rule out) is kept
			// rather than failing every later command of the group.
			if _, err := e.exec(ctx, tx, `INSERT INTO kdb_pending (sid, grp, ms, seq, consumer, delivery_time, delivery_count)
				VALUES (?, ?, ?, ?, ?, ?, 1) ON CONFLICT (sid, grp, ms, seq) DO NOTHING`,
				sid, grp, id.Ms, id.Seq, r.consumer, r.deliveryMs); err != nil {
				return err
			}
		}
	}
	_, err = e.exec(ctx, tx, `DELETE FROM kdb_pending_runs WHERE sid = ? AND grp = ?`, sid, grp)
	return err
}

// ackRuns removes ids from the runs of the group that hold them and returns how many
// it removed (each id once) and the ids no run held, for the rows.
func (e *Engine) ackRuns(ctx context.Context, tx *sql.Tx, sid int64, grp string, ids []ID) (int64, []ID, error) {
	taken, rest, err := e.takeFromRuns(ctx, tx, sid, grp, ids)
	return int64(len(taken)), rest, err
}

// runID is an id taken out of its run, with the run's owner and delivery time.
type runID struct {
	id         ID
	consumer   string
	deliveryMs int64
}

// materializeRunIDs turns the ids of ids that runs of the group hold into kdb_pending
// rows (the run's owner and delivery time, a count of 1), leaving the rest of the runs
// as they are: for commands that work on named ids (XCLAIM).
func (e *Engine) materializeRunIDs(ctx context.Context, tx *sql.Tx, sid int64, grp string, ids []ID) error {
	if len(ids) == 0 {
		return nil
	}
	taken, _, err := e.takeFromRuns(ctx, tx, sid, grp, ids)
	if err != nil {
		return err
	}
	for _, t := range taken {
		if _, err := e.exec(ctx, tx, `INSERT INTO kdb_pending (sid, grp, ms, seq, consumer, delivery_time, delivery_count)
			VALUES (?, ?, ?, ?, ?, ?, 1) ON CONFLICT (sid, grp, ms, seq) DO NOTHING`,
			sid, grp, t.id.Ms, t.id.Seq, t.consumer, t.deliveryMs); err != nil {
			return err
		}
	}
	return nil
}

// takeFromRuns removes ids from the runs of the group that hold them (rewriting a run
// it thins, deleting one it empties) and returns them (each once, ascending, with their
// run's owner and delivery time) and the ids no run held.
func (e *Engine) takeFromRuns(ctx context.Context, tx *sql.Tx, sid int64, grp string, ids []ID) ([]runID, []ID, error) {
	acked := slices.Clone(ids)
	slices.SortFunc(acked, ID.Cmp)
	acked = slices.Compact(acked)
	lo, hi := acked[0], acked[len(acked)-1]
	runs, err := e.selectRuns(ctx, tx, sid, grp, ` AND (last_ms, last_seq) >= (?, ?)
		AND (first_ms, first_seq) <= (?, ?)`, lo.Ms, lo.Seq, hi.Ms, hi.Seq)
	if err != nil {
		return nil, nil, err
	}
	if len(runs) == 0 {
		return nil, ids, nil
	}
	var taken []runID
	held := make([]bool, len(acked))
	for _, r := range runs {
		keep := r.ids[:0:0]
		for _, id := range r.ids {
			if i, ok := slices.BinarySearchFunc(acked, id, ID.Cmp); ok {
				held[i] = true
				taken = append(taken, runID{id, r.consumer, r.deliveryMs})
				continue
			}
			keep = append(keep, id)
		}
		if len(keep) == len(r.ids) {
			continue
		}
		if len(keep) == 0 {
			_, err = e.exec(ctx, tx, `DELETE FROM kdb_pending_runs WHERE sid = ? AND grp = ? AND last_ms = ? AND last_seq = ?`,
				sid, grp, r.last.Ms, r.last.Seq)
		} else {
			nl := keep[len(keep)-1]
			_, err = e.exec(ctx, tx, `UPDATE kdb_pending_runs SET last_ms = ?, last_seq = ?, first_ms = ?, first_seq = ?, n = ?, ids = ?
				WHERE sid = ? AND grp = ? AND last_ms = ? AND last_seq = ?`,
				nl.Ms, nl.Seq, keep[0].Ms, keep[0].Seq, int64(len(keep)), encodeRunIDs(keep), sid, grp, r.last.Ms, r.last.Seq)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	var rest []ID
	for i, id := range acked {
		if !held[i] {
			rest = append(rest, id)
		}
	}
	return taken, rest, nil
}

// materializeFirstRunIDs turns into rows the ids, among consumer's first count pending
// ids from start on (rows and runs merged), that runs hold: a consumer re-reading its
// own pending entries bumps their delivery counts, which only rows keep. Nothing is
// written when none of them is in a run (a consumer with nothing pending, the common
// case of a worker that reads its history before each new read).
func (e *Engine) materializeFirstRunIDs(ctx context.Context, tx *sql.Tx, sid int64, grp, consumer string, start ID, count int64) error {
	runLimit := count
	if runLimit < math.MaxInt64 {
		runLimit++ // the first run may hold ids below start only
	}
	runs, err := e.selectRuns(ctx, tx, sid, grp, ` AND consumer = ? AND (last_ms, last_seq) >= (?, ?)
		ORDER BY last_ms, last_seq LIMIT ?`, consumer, start.Ms, start.Seq, runLimit)
	if err != nil || len(runs) == 0 {
		return err
	}
	rows, err := e.query(ctx, tx, `SELECT ms, seq FROM kdb_pending WHERE sid = ? AND grp = ? AND consumer = ?
		AND (ms, seq) >= (?, ?) ORDER BY ms, seq LIMIT ?`, sid, grp, consumer, start.Ms, start.Seq, count)
	if err != nil {
		return err
	}
	type pendingID struct {
		id    ID
		inRun bool
	}
	var fromRows []pendingID
	for rows.Next() {
		var p pendingID
		if err := rows.Scan(&p.id.Ms, &p.id.Seq); err != nil {
			rows.Close()
			return err
		}
		fromRows = append(fromRows, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	fromRuns := runIDsIn(runs, start, MaxID, count, func(_ int, _ *pendingRun, id ID) pendingID { return pendingID{id, true} })
	var chosen []ID
	for _, p := range mergeByID(fromRows, fromRuns, func(p pendingID) ID { return p.id }, count) {
		if p.inRun {
			chosen = append(chosen, p.id)
		}
	}
	return e.materializeRunIDs(ctx, tx, sid, grp, chosen)
}

// runIDsIn returns, for the ids of runs (ascending, runs disjoint and ordered) within
// [lo, hi], at most limit values made by item from each id and its run (k its index in
// runs): the runs' side of a scan that merges them with kdb_pending rows (mergeByID).
func runIDsIn[T any](runs []pendingRun, lo, hi ID, limit int64, item func(k int, r *pendingRun, id ID) T) []T {
	var out []T
	for k := range runs {
		for _, id := range runs[k].ids {
			if id.Less(lo) || hi.Less(id) {
				continue
			}
			if int64(len(out)) >= limit {
				return out
			}
			out = append(out, item(k, &runs[k], id))
		}
	}
	return out
}

// mergeByID merges a and b, each ascending by id and holding no id of the other, and
// keeps the first limit: a group's pending rows and its runs' ids in the order Redis's
// PEL has them.
func mergeByID[T any](a, b []T, id func(T) ID, limit int64) []T {
	out := make([]T, 0, min(limit, int64(len(a)+len(b))))
	for int64(len(out)) < limit && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || len(a) > 0 && id(a[0]).Less(id(b[0])) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}
