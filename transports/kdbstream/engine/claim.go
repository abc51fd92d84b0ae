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
		if err := e.materializeRuns(ctx, tx, s.sid, grp); err != nil {
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
		if err := e.materializeRuns(ctx, tx, s.sid, grp); err != nil {
			return err
		}
		now := e.nowMs()
		attempts := count * 10
		// One extra row tells the next cursor.
		rows, err := e.query(ctx, tx, `SELECT p.ms, p.seq, p.delivery_time, p.delivery_count, x.fields FROM kdb_pending p
			LEFT JOIN kdb_entries x ON x.sid = p.sid AND x.ms = p.ms AND x.seq = p.seq
			WHERE p.sid = ? AND p.grp = ? AND (p.ms >= ? AND (p.ms > ? OR p.seq >= ?))
			ORDER BY p.ms, p.seq LIMIT ?`, s.sid, grp, from.Ms, from.Ms, from.Seq, attempts+1)
		if err != nil {
			return err
		}
		type row struct {
			id     ID
			dt, dc int64
			fields []byte
		}
		var scanned []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id.Ms, &r.id.Seq, &r.dt, &r.dc, &r.fields); err != nil {
				rows.Close()
				return err
			}
			scanned = append(scanned, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		i := 0
		created := false
		for ; i < len(scanned) && attempts > 0 && count > 0; i++ {
			attempts--
			r := scanned[i]
			if r.fields == nil {
				if _, err := e.deletePending(ctx, tx, s.sid, grp, []ID{r.id}); err != nil {
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
			if _, err := e.exec(ctx, tx, `UPDATE kdb_pending SET consumer = ?, delivery_time = ?, delivery_count = ?
				WHERE sid = ? AND grp = ? AND ms = ? AND seq = ?`, consumer, now, r.dc, s.sid, grp, r.id.Ms, r.id.Seq); err != nil {
				return err
			}
			c := Claimed{Entry: Entry{ID: r.id}, Deliveries: r.dc}
			if !justID {
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
		return nil
	})
	return res, err
}
