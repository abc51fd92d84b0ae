package engine

import (
	"context"
	"database/sql"
	"math"
)

// XLen mirrors XLEN (0 for a missing stream).
func (e *Engine) XLen(ctx context.Context, stream string) (int64, error) {
	var n int64
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		s, err := e.selectStream(ctx, tx, stream)
		if s != nil {
			n = s.length
		}
		return err
	})
	return n, err
}

// XRange mirrors XRANGE <stream> <start> <end> [COUNT n]; count <= 0 means all.
func (e *Engine) XRange(ctx context.Context, stream, start, end string, count int64) ([]Entry, error) {
	from, _, err := parseRangeStart(start)
	if err != nil {
		return nil, err
	}
	to, _, err := parseRangeEnd(end)
	if err != nil {
		return nil, err
	}
	if count <= 0 {
		count = math.MaxInt64
	}
	var out []Entry
	err = e.inTx(ctx, func(tx *sql.Tx) error {
		out = []Entry{}
		s, err := e.selectStream(ctx, tx, stream)
		if err != nil || s == nil || to.Less(from) {
			return err
		}
		rows, err := e.query(ctx, tx, `SELECT ms, seq, fields FROM kdb_entries WHERE sid = ?
			AND (ms, seq) >= (?, ?) AND (ms, seq) <= (?, ?) ORDER BY ms, seq LIMIT ?`,
			s.sid, from.Ms, from.Seq, to.Ms, to.Seq, count)
		if err != nil {
			return err
		}
		out, err = e.scanEntries(rows)
		if out == nil {
			out = []Entry{}
		}
		return err
	})
	return out, err
}

// XDel mirrors XDEL: it removes entries (not their PEL references), raises
// max-deleted-entry-id and returns how many existed.
func (e *Engine) XDel(ctx context.Context, stream string, ids ...string) (int64, error) {
	parsed := make([]ID, 0, len(ids))
	for _, s := range ids {
		id, err := ParseStrictID(s)
		if err != nil {
			return 0, err
		}
		parsed = append(parsed, id)
	}
	var n int64
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		n = 0
		s, err := e.lockStream(ctx, tx, stream, false)
		if err != nil || s == nil {
			return err
		}
		for _, id := range parsed {
			res, err := e.exec(ctx, tx, `DELETE FROM kdb_entries WHERE sid = ? AND ms = ? AND seq = ?`, s.sid, id.Ms, id.Seq)
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if k > 0 {
				n++
				s.length--
				if s.maxDel.Less(id) {
					s.maxDel = id
				}
			}
		}
		if n == 0 {
			return nil
		}
		if err := e.refreshFirst(ctx, tx, s); err != nil {
			return err
		}
		return e.saveStream(ctx, tx, s)
	})
	return n, err
}

// StreamInfo is XINFO STREAM (without FULL).
type StreamInfo struct {
	Length            int64
	LastGeneratedID   ID
	MaxDeletedEntryID ID
	EntriesAdded      int64
	RecordedFirstID   ID
	Groups            int64
	FirstEntry        *Entry
	LastEntry         *Entry
}

// XInfoStream mirrors XINFO STREAM; a missing stream is "ERR no such key".
func (e *Engine) XInfoStream(ctx context.Context, stream string) (StreamInfo, error) {
	var si StreamInfo
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		si = StreamInfo{}
		s, err := e.selectStream(ctx, tx, stream)
		if err != nil {
			return err
		}
		if s == nil {
			return errNoSuchKey
		}
		si = StreamInfo{Length: s.length, LastGeneratedID: s.last, MaxDeletedEntryID: s.maxDel, EntriesAdded: s.added, RecordedFirstID: s.first}
		if err := e.queryRow(ctx, tx, `SELECT COUNT(*) FROM kdb_groups WHERE sid = ?`, s.sid).Scan(&si.Groups); err != nil {
			return err
		}
		if s.length == 0 {
			return nil
		}
		for _, q := range []struct {
			order string
			dst   **Entry
		}{{"ms, seq", &si.FirstEntry}, {"ms DESC, seq DESC", &si.LastEntry}} {
			rows, err := e.query(ctx, tx, (`SELECT ms, seq, fields FROM kdb_entries WHERE sid = ? ORDER BY ` + q.order + ` LIMIT 1`), s.sid)
			if err != nil {
				return err
			}
			es, err := e.scanEntries(rows)
			if err != nil {
				return err
			}
			if len(es) == 1 {
				*q.dst = &es[0]
			}
		}
		return nil
	})
	return si, err
}

// GroupInfo is one row of XINFO GROUPS.
type GroupInfo struct {
	Name            string
	Consumers       int64
	Pending         int64
	LastDeliveredID ID
	EntriesRead     int64 // -1 = nil
	Lag             int64 // -1 = nil (see LagValid: Redis's lag can be negative)
	LagValid        bool  // false: Redis replies nil (unknown lag)
}

// XInfoGroups mirrors XINFO GROUPS (groups in name byte order, as Redis's rax).
func (e *Engine) XInfoGroups(ctx context.Context, stream string) ([]GroupInfo, error) {
	var out []GroupInfo
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		out = []GroupInfo{}
		s, err := e.selectStream(ctx, tx, stream)
		if err != nil {
			return err
		}
		if s == nil {
			return errNoSuchKey
		}
		rows, err := e.query(ctx, tx, `SELECT g.name, g.last_ms, g.last_seq, g.entries_read,
			(SELECT COUNT(*) FROM kdb_consumers c WHERE c.sid = g.sid AND c.grp = g.name),
			(SELECT COUNT(*) FROM kdb_pending p WHERE p.sid = g.sid AND p.grp = g.name) +
			(SELECT COALESCE(SUM(r.n), 0) FROM kdb_pending_runs r WHERE r.sid = g.sid AND r.grp = g.name)
			FROM kdb_groups g WHERE g.sid = ?`, s.sid)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var gi GroupInfo
			var er sql.NullInt64
			if err := rows.Scan(&gi.Name, &gi.LastDeliveredID.Ms, &gi.LastDeliveredID.Seq, &er, &gi.Consumers, &gi.Pending); err != nil {
				return err
			}
			g := &group{name: gi.Name, last: gi.LastDeliveredID, entriesRead: -1}
			if er.Valid {
				g.entriesRead = er.Int64
			}
			gi.EntriesRead = g.entriesRead
			gi.Lag = -1
			if l, ok := s.lag(g); ok {
				gi.Lag, gi.LagValid = l, true
			}
			out = append(out, gi)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		sortGroups(out)
		return nil
	})
	return out, err
}

func sortGroups(gs []GroupInfo) {
	for i := 1; i < len(gs); i++ {
		for j := i; j > 0 && gs[j].Name < gs[j-1].Name; j-- {
			gs[j], gs[j-1] = gs[j-1], gs[j]
		}
	}
}
