package engine

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ClaimOptions are XCLAIM's options.
type ClaimOptions struct {
	Idle       *time.Duration // IDLE: set the idle time instead of 0
	RetryCount *int64         // RETRYCOUNT: set the delivery count
	Force      bool           // FORCE: create the PEL entry if the stream has the entry
	JustID     bool           // JUSTID: do not bump the delivery count, return ids only
}

// Claimed is one claimed entry (Fields is nil with JustID).
type Claimed struct {
	Entry
	Deliveries int64
}

type pelRow struct {
	consumer   string
	deliveryMs int64
	count      int64
}

func (e *Engine) loadPEL(ctx context.Context, tx *sql.Tx, sid int64, grp string, id ID) (*pelRow, error) {
	p := &pelRow{}
	err := e.queryRow(ctx, tx, `SELECT consumer, delivery_time, delivery_count FROM kdb_pending WHERE sid = ? AND grp = ? AND ms = ? AND seq = ?`,
		sid, grp, id.Ms, id.Seq).Scan(&p.consumer, &p.deliveryMs, &p.count)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return p, err
}

// XClaim mirrors XCLAIM (Redis 7.0): ids idle for at least minIdle move to consumer;
// an id pending but deleted from the stream is dropped from the PEL and not returned.
// The consumer is created only when something is claimed.
func (e *Engine) XClaim(ctx context.Context, stream, grp, consumer string, minIdle time.Duration, ids []string, o ClaimOptions) ([]Claimed, error) {
	parsed := make([]ID, 0, len(ids))
	for _, s := range ids {
		id, err := ParseStrictID(s)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, id)
	}
	var out []Claimed
	err := e.inTxRelaxed(ctx, func(tx *sql.Tx) error {
		out = []Claimed{}
		s, _, err := e.lockGroup(ctx, tx, stream, grp, "")
		if err != nil {
			return err
		}
		if err := e.materializeRunIDs(ctx, tx, s.sid, grp, parsed); err != nil {
			return err
		}
		now := e.nowMs()
		deliveryTime := now
		if o.Idle != nil {
			deliveryTime = now - o.Idle.Milliseconds()
		}
		created := false
		for _, id := range parsed {
			p, err := e.loadPEL(ctx, tx, s.sid, grp, id)
			if err != nil {
				return err
			}
			fields, exists, err := e.entryFields(ctx, tx, s.sid, id)
			if err != nil {
				return err
			}
			if !exists {
				if p != nil {
					if _, err := e.deletePending(ctx, tx, s.sid, grp, []ID{id}); err != nil {
						return err
					}
				}
				continue
			}
			forced := false
			if p == nil {
				if !o.Force {
					continue
				}
				p, forced = &pelRow{deliveryMs: now, count: 1}, true // streamCreateNACK starts at 1
			}
			if !forced && minIdle > 0 && now-p.deliveryMs < minIdle.Milliseconds() {
				continue
			}
			switch {
			case o.RetryCount != nil:
				p.count = *o.RetryCount
			case !o.JustID:
				p.count++
			}
			if !created {
				if err := e.touchConsumer(ctx, tx, s.sid, grp, consumer, now, true); err != nil {
					return err
				}
				created = true
			}
			if _, err := e.exec(ctx, tx, `INSERT INTO kdb_pending (sid, grp, ms, seq, consumer, delivery_time, delivery_count)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sid, grp, ms, seq) DO UPDATE SET consumer = excluded.consumer,
				delivery_time = excluded.delivery_time, delivery_count = excluded.delivery_count`,
				s.sid, grp, id.Ms, id.Seq, consumer, deliveryTime, p.count); err != nil {
				return err
			}
			c := Claimed{Entry: Entry{ID: id}, Deliveries: p.count}
			if !o.JustID {
				c.Fields = fields
			}
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// AutoClaimResult is XAUTOCLAIM's reply.
type AutoClaimResult struct {
	Next    ID
	Claimed []Claimed
	Deleted []ID // pending ids whose entries were deleted: purged from the PEL (Redis 7)
}

// XAutoClaim mirrors XAUTOCLAIM <stream> <group> <consumer> <minIdle> <start> COUNT
// <count> [JUSTID] (Redis 7.0 t_stream.c xautoclaimCommand): it scans at most count*10
// PEL entries from start; deleted entries count against COUNT.
func (e *Engine) XAutoClaim(ctx context.Context, stream, grp, consumer string, minIdle time.Duration, start string, count int64, justID bool) (AutoClaimResult, error) {
	from, _, err := parseRangeStart(start)
	if err != nil {
		return AutoClaimResult{}, err
	}
	if count <= 0 {
		count = 100
	}
	if next, ok := e.idleScan(ctx, stream, grp, from, e.nowMs()-minIdle.Milliseconds(), count*10); ok {
		return AutoClaimResult{Next: next, Claimed: []Claimed{}, Deleted: []ID{}}, nil
	}
	var res AutoClaimResult
	err = e.inTxRelaxed(ctx, func(tx *sql.Tx) error {
		res = AutoClaimResult{Claimed: []Claimed{}, Deleted: []ID{}}
		s, _, err := e.lockGroup(ctx, tx, stream, grp, "")
		if err != nil {
			return err
		}
		now := e.nowMs()
		attempts := count * 10
		// One extra id tells the next cursor.
		scanned, err := e.autoClaimScan(ctx, tx, s.sid, grp, from, attempts+1)
		if err != nil {
			return err
		}
		var fromRuns []ID               // ids taken out of their runs: purged or claimed
		var claimedRuns []autoClaimItem // of those, the claimed ones, which become rows
		i := 0
		created := false
		for ; i < len(scanned) && attempts > 0 && count > 0; i++ {
			attempts--
			r := scanned[i]
			if !r.exists {
				if r.inRun {
					fromRuns = append(fromRuns, r.id)
				} else if _, err := e.deletePending(ctx, tx, s.sid, grp, []ID{r.id}); err != nil {
					return err
				}
				res.Deleted = append(res.Deleted, r.id)
				count--
				continue
			}
			if minIdle > 0 && now-r.dt < minIdle.Milliseconds() {
				continue
			}
			if !justID {
				r.dc++
			}
			if !created {
				if err := e.touchConsumer(ctx, tx, s.sid, grp, consumer, now, true); err != nil {
					return err
				}
				created = true
			}
			if r.inRun {
				fromRuns = append(fromRuns, r.id)
				claimedRuns = append(claimedRuns, r)
			} else if _, err := e.exec(ctx, tx, `UPDATE kdb_pending SET consumer = ?, delivery_time = ?, delivery_count = ?
				WHERE sid = ? AND grp = ? AND ms = ? AND seq = ?`, consumer, now, r.dc, s.sid, grp, r.id.Ms, r.id.Seq); err != nil {
				return err
			}
			c := Claimed{Entry: Entry{ID: r.id}, Deliveries: r.dc}
			if !justID {
				if r.inRun { // the scan only checked that the entry exists
					if err := e.queryRow(ctx, tx, `SELECT fields FROM kdb_entries WHERE sid = ? AND ms = ? AND seq = ?`,
						s.sid, r.id.Ms, r.id.Seq).Scan(&r.fields); err != nil {
						return err
					}
				}
				if c.Fields, err = decodeFields(r.fields); err != nil {
					return err
				}
			}
			res.Claimed = append(res.Claimed, c)
			count--
		}
		if i < len(scanned) {
			res.Next = scanned[i].id
		}
		// Only the runs the command changed are rewritten: a claimed id leaves its run
		// for a row of its new owner, a purged one leaves it; runs that were only
		// scanned (not idle enough) stay as they are.
		if len(fromRuns) > 0 {
			if _, _, err := e.ackRuns(ctx, tx, s.sid, grp, fromRuns); err != nil {
				return err
			}
		}
		for _, r := range claimedRuns {
			if _, err := e.exec(ctx, tx, `INSERT INTO kdb_pending (sid, grp, ms, seq, consumer, delivery_time, delivery_count)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, s.sid, grp, r.id.Ms, r.id.Seq, consumer, now, r.dc); err != nil {
				return err
			}
		}
		return nil
	})
	return res, err
}

// autoClaimItem is one pending id of XAUTOCLAIM's scan: a kdb_pending row, with its
// entry's fields, or an id of a pending run (inRun); exists is false when the entry
// is deleted.
type autoClaimItem struct {
	id     ID
	dt, dc int64
	fields []byte
	exists bool
	inRun  bool
	run    int // the run's index in the scan, when inRun
}

// autoClaimScan returns the first limit pending ids of the group from from on, in id
// order, merged from the rows and the runs (pel_runs.go) without turning runs into
// rows: XAUTOCLAIM's scan counts every pending id, idle or not, so the runs' ids must
// take their places in it, but only the ones it claims or purges need to change.
func (e *Engine) autoClaimScan(ctx context.Context, tx *sql.Tx, sid int64, grp string, from ID, limit int64) ([]autoClaimItem, error) {
	rows, err := e.query(ctx, tx, `SELECT p.ms, p.seq, p.delivery_time, p.delivery_count, x.fields FROM kdb_pending p
		LEFT JOIN kdb_entries x ON x.sid = p.sid AND x.ms = p.ms AND x.seq = p.seq
		WHERE p.sid = ? AND p.grp = ? AND (p.ms, p.seq) >= (?, ?)
		ORDER BY p.ms, p.seq LIMIT ?`, sid, grp, from.Ms, from.Seq, limit)
	if err != nil {
		return nil, err
	}
	var fromRows []autoClaimItem
	for rows.Next() {
		var r autoClaimItem
		if err := rows.Scan(&r.id.Ms, &r.id.Seq, &r.dt, &r.dc, &r.fields); err != nil {
			rows.Close()
			return nil, err
		}
		r.exists = r.fields != nil
		fromRows = append(fromRows, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Each run holds at least one id >= from, so limit runs are enough.
	runs, err := e.selectRuns(ctx, tx, sid, grp, ` AND (last_ms, last_seq) >= (?, ?)
		ORDER BY last_ms, last_seq LIMIT ?`, from.Ms, from.Seq, limit)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return fromRows, nil
	}
	fromRuns := runIDsIn(runs, from, MaxID, limit, func(k int, r *pendingRun, id ID) autoClaimItem {
		return autoClaimItem{id: id, dt: r.deliveryMs, dc: 1, inRun: true, run: k}
	})
	merged := mergeByID(fromRows, fromRuns, func(it autoClaimItem) ID { return it.id }, limit)
	// Whether the run ids' entries exist, one range of kdb_entries per run in the
	// window: a run's ids were consecutive entries when they were read and nothing is
	// appended between them later, so the span from a run's first to its last id holds
	// its own ids, the ones acked out of it, and nothing else (at most maxRunIDs). One
	// statement joining the runs to their spans was measured and planned worse on
	// SQLite.
	for lo := 0; lo < len(merged); {
		if !merged[lo].inRun {
			lo++
			continue
		}
		hi := lo
		for hi+1 < len(merged) && merged[hi+1].inRun && merged[hi+1].run == merged[lo].run {
			hi++
		}
		if err := e.runEntriesExist(ctx, tx, sid, merged[lo:hi+1]); err != nil {
			return nil, err
		}
		lo = hi + 1
	}
	return merged, nil
}

// runEntriesExist marks the items (ids of one run, ascending) whose entries are in
// kdb_entries.
func (e *Engine) runEntriesExist(ctx context.Context, tx *sql.Tx, sid int64, items []autoClaimItem) error {
	lo, hi := items[0].id, items[len(items)-1].id
	rows, err := e.query(ctx, tx, `SELECT ms, seq FROM kdb_entries WHERE sid = ?
		AND (ms, seq) >= (?, ?) AND (ms, seq) <= (?, ?) ORDER BY ms, seq`,
		sid, lo.Ms, lo.Seq, hi.Ms, hi.Seq)
	if err != nil {
		return err
	}
	defer rows.Close()
	k := 0
	for rows.Next() {
		var id ID
		if err := rows.Scan(&id.Ms, &id.Seq); err != nil {
			return err
		}
		for k < len(items) && items[k].id.Less(id) {
			k++
		}
		if k < len(items) && items[k].id == id {
			items[k].exists = true
			k++
		}
	}
	return rows.Err()
}
