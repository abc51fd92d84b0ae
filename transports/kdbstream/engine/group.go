package engine

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"
)

// group is a consumer group's row.
type group struct {
	name        string
	last        ID    // last_delivered_id
	entriesRead int64 // -1 = unknown (Redis's SCG_INVALID_ENTRIES_READ, shown as nil)
}

func (e *Engine) loadGroup(ctx context.Context, tx *sql.Tx, sid int64, name string) (*group, error) {
	g := &group{name: name}
	var er sql.NullInt64
	err := e.queryRow(ctx, tx, `SELECT last_ms, last_seq, entries_read FROM kdb_groups WHERE sid = ? AND name = ?`, sid, name).
		Scan(&g.last.Ms, &g.last.Seq, &er)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	g.entriesRead = -1
	if er.Valid {
		g.entriesRead = er.Int64
	}
	return g, err
}

func (g *group) readArg() any {
	if g.entriesRead < 0 {
		return nil
	}
	return g.entriesRead
}

func (e *Engine) saveGroup(ctx context.Context, tx *sql.Tx, sid int64, g *group) error {
	_, err := e.exec(ctx, tx, `UPDATE kdb_groups SET last_ms = ?, last_seq = ?, entries_read = ? WHERE sid = ? AND name = ?`,
		g.last.Ms, g.last.Seq, g.readArg(), sid, g.name)
	return err
}

// lockGroup locks the stream and loads the group, or returns NOGROUP.
func (e *Engine) lockGroup(ctx context.Context, tx *sql.Tx, stream, grp, cmd string) (*stream, *group, error) {
	s, err := e.lockStream(ctx, tx, stream, false)
	if err != nil {
		return nil, nil, err
	}
	if s == nil {
		return nil, nil, errNoGroup(stream, grp, cmd)
	}
	g, err := e.loadGroup(ctx, tx, s.sid, grp)
	if err != nil {
		return nil, nil, err
	}
	if g == nil {
		return nil, nil, errNoGroup(stream, grp, cmd)
	}
	return s, g, nil
}

// touchConsumer creates the consumer if needed and records its seen time (and its
// active time when active, Redis 7.2's meaning: a read or claim that delivered something).
func (e *Engine) touchConsumer(ctx context.Context, tx *sql.Tx, sid int64, grp, consumer string, now int64, active bool) error {
	if active {
		_, err := e.exec(ctx, tx, `INSERT INTO kdb_consumers (sid, grp, name, seen_time, active_time) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (sid, grp, name) DO UPDATE SET seen_time = excluded.seen_time, active_time = excluded.active_time`,
			sid, grp, consumer, now, now)
		return err
	}
	_, err := e.exec(ctx, tx, `INSERT INTO kdb_consumers (sid, grp, name, seen_time, active_time) VALUES (?, ?, ?, ?, -1)
		ON CONFLICT (sid, grp, name) DO UPDATE SET seen_time = excluded.seen_time`, sid, grp, consumer, now)
	return err
}

// GroupCreate mirrors XGROUP CREATE <stream> <group> <start> [MKSTREAM] [ENTRIESREAD n];
// entriesRead < 0 means not given.
func (e *Engine) GroupCreate(ctx context.Context, stream, grp, start string, mkstream bool, entriesRead int64) error {
	return e.inTx(ctx, func(tx *sql.Tx) error {
		s, err := e.lockStream(ctx, tx, stream, false)
		if err != nil {
			return err
		}
		if s == nil && !mkstream {
			return errNoKeyForGroup
		}
		var id ID
		if start == "$" {
			if s != nil {
				id = s.last
			}
		} else if id, err = ParseStrictID(start); err != nil {
			return err
		}
		if s == nil {
			if s, err = e.lockStream(ctx, tx, stream, true); err != nil {
				return err
			}
		}
		g := &group{name: grp, last: id, entriesRead: entriesRead}
		res, err := e.exec(ctx, tx, `INSERT INTO kdb_groups (sid, name, last_ms, last_seq, entries_read) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (sid, name) DO NOTHING`, s.sid, grp, id.Ms, id.Seq, g.readArg())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return errBusyGroup
		}
		return nil
	})
}

// ReadResult is XREADGROUP's reply for one stream. Nil is Redis's nil reply (no new
// entries for ">"); a history read returns an empty, non-nil list instead.
type ReadResult struct {
	Entries    []Entry
	Deliveries []int64 // delivery count of each entry after this read
	Nil        bool
}

// ReadGroup mirrors XREADGROUP GROUP <group> <consumer> [COUNT n] [BLOCK ms] [NOACK]
// STREAMS <stream> <id>. count <= 0 means no limit. block < 0 means do not block;
// block == 0 waits until an entry arrives or ctx ends (Redis's BLOCK 0). While it
// waits it runs no query: appends wake it (in this process directly; from other
// processes through PostgreSQL's NOTIFY), so idle blocked readers cost memory only.
func (e *Engine) ReadGroupRaw(ctx context.Context, stream, grp, consumer, id string, count int64, block time.Duration, noack bool) (ReadResult, error) {
	if id != ">" {
		start, err := ParseStrictID(id)
		if err != nil {
			return ReadResult{}, err
		}
		return e.readHistory(ctx, stream, grp, consumer, start, count)
	}
	var deadline <-chan time.Time
	if block > 0 {
		t := time.NewTimer(block)
		defer t.Stop()
		deadline = t.C
	}
	for {
		wake := e.waiters.wait(stream)
		var res ReadResult
		var err error
		// After a full batch more entries are likely waiting: skip the unlocked look.
		key := stream + "\x00" + grp + "\x00" + consumer
		_, full := e.fullReads.Load(key)
		if !full && e.nothingNew(ctx, stream, grp) {
			res.Nil = true
		} else {
			res, err = e.readNew(ctx, stream, grp, consumer, count, noack)
		}
		if count > 0 && int64(len(res.Entries)) == count {
			e.fullReads.Store(key, struct{}{})
		} else if full {
			e.fullReads.Delete(key)
		}
		if err != nil || !res.Nil || block < 0 {
			return res, err
		}
		switch waitWake(ctx, e, []<-chan struct{}{wake}, deadline) {
		case wokeDeadline:
			return ReadResult{Nil: true}, nil
		case wokeCtx:
			return ReadResult{}, ctx.Err()
		case wokeClosed:
			return ReadResult{}, errClosed
		}
	}
}

func (e *Engine) readNew(ctx context.Context, stream, grp, consumer string, count int64, noack bool) (ReadResult, error) {
	var res ReadResult
	err := e.inTxRelaxed(ctx, func(tx *sql.Tx) error {
		res = ReadResult{}
		s, g, err := e.lockGroup(ctx, tx, stream, grp, "XREADGROUP with GROUP option")
		if err != nil {
			return err
		}
		now := e.nowMs()
		if count <= 0 {
			count = math.MaxInt64
		}
		var entries []Entry
		if g.last.Less(s.last) {
			rows, err := e.query(ctx, tx, `SELECT ms, seq, fields FROM kdb_entries WHERE sid = ? AND (ms, seq) > (?, ?)
				ORDER BY ms, seq LIMIT ?`, s.sid, g.last.Ms, g.last.Seq, count)
			if err != nil {
				return err
			}
			if entries, err = e.scanEntries(rows); err != nil {
				return err
			}
		}
		if len(entries) == 0 {
			// Redis serves ">" (and creates the consumer) only when the stream has
			// entries past the group's last id.
			res.Nil = true
			return nil
		}
		if err := e.touchConsumer(ctx, tx, s.sid, grp, consumer, now, true); err != nil {
			return err
		}
		prev := g.last
		for _, en := range entries {
			// Redis's entries_read bookkeeping (t_stream.c streamReplyWithRange).
			if g.entriesRead >= 0 && !s.hasTombstones(en.ID) {
				g.entriesRead++
			} else if s.added > 0 {
				g.entriesRead = s.estimateRead(en.ID)
			}
			g.last = en.ID
		}
		if err := e.saveGroup(ctx, tx, s.sid, g); err != nil {
			return err
		}
		if !noack {
			if err := e.addPending(ctx, tx, s.sid, grp, consumer, now, prev, entries); err != nil {
				return err
			}
		}
		res.Entries = entries
		res.Deliveries = make([]int64, len(entries))
		for i := range res.Deliveries {
			res.Deliveries[i] = 1
		}
		return nil
	})
	return res, err
}

// upsertPending adds the entries with prev < id <= last (the ones just read) to the
// PEL in one INSERT ... SELECT, whatever their number; an id already pending (the
// group's last id was moved back) is reassigned with a count of 1, as Redis does.
// ("WHERE true" lets SQLite parse ON CONFLICT after a SELECT.)
func (e *Engine) upsertPending(ctx context.Context, tx *sql.Tx, sid int64, grp, consumer string, now int64, prev, last ID) error {
	_, err := e.exec(ctx, tx, `INSERT INTO kdb_pending (sid, grp, ms, seq, consumer, delivery_time, delivery_count)
		SELECT sid, ?, ms, seq, ?, ?, 1 FROM kdb_entries WHERE true AND sid = ?
			AND (ms, seq) > (?, ?) AND (ms, seq) <= (?, ?)
		ON CONFLICT (sid, grp, ms, seq) DO UPDATE SET consumer = excluded.consumer,
			delivery_time = excluded.delivery_time, delivery_count = 1`,
		grp, consumer, now, sid, prev.Ms, prev.Seq, last.Ms, last.Seq)
	return err
}

// readHistory serves a consumer's own pending entries with ids > after: each re-read
// bumps the delivery count and time; an entry deleted from the stream comes back with
// nil fields and is left as it is (t_stream.c streamReplyWithRangeFromConsumerPEL).
func (e *Engine) readHistory(ctx context.Context, stream, grp, consumer string, after ID, count int64) (ReadResult, error) {
	var res ReadResult
	err := e.inTxRelaxed(ctx, func(tx *sql.Tx) error {
		res = ReadResult{Entries: []Entry{}}
		s, _, err := e.lockGroup(ctx, tx, stream, grp, "XREADGROUP with GROUP option")
		if err != nil {
			return err
		}
		now := e.nowMs()
		if err := e.touchConsumer(ctx, tx, s.sid, grp, consumer, now, false); err != nil {
			return err
		}
		start, ok := after.Next()
		if !ok {
			return nil
		}
		if count <= 0 {
			count = math.MaxInt64
		}
		if err := e.materializeFirstRunIDs(ctx, tx, s.sid, grp, consumer, start, count); err != nil {
			return err
		}
		rows, err := e.query(ctx, tx, `SELECT p.ms, p.seq, p.delivery_count, x.fields FROM kdb_pending p
			LEFT JOIN kdb_entries x ON x.sid = p.sid AND x.ms = p.ms AND x.seq = p.seq
			WHERE p.sid = ? AND p.grp = ? AND p.consumer = ? AND (p.ms, p.seq) >= (?, ?)
			ORDER BY p.ms, p.seq LIMIT ?`, s.sid, grp, consumer, start.Ms, start.Seq, count)
		if err != nil {
			return err
		}
		defer rows.Close()
		var live []ID
		for rows.Next() {
			var en Entry
			var dc int64
			var b []byte
			if err := rows.Scan(&en.ID.Ms, &en.ID.Seq, &dc, &b); err != nil {
				return err
			}
			if b != nil {
				if en.Fields, err = decodeFields(b); err != nil {
					return err
				}
				dc++
				live = append(live, en.ID)
			}
			res.Entries = append(res.Entries, en)
			res.Deliveries = append(res.Deliveries, dc)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for _, id := range live {
			if _, err := e.exec(ctx, tx, `UPDATE kdb_pending SET delivery_time = ?, delivery_count = delivery_count + 1
				WHERE sid = ? AND grp = ? AND ms = ? AND seq = ?`, now, s.sid, grp, id.Ms, id.Seq); err != nil {
				return err
			}
		}
		return nil
	})
	return res, err
}
