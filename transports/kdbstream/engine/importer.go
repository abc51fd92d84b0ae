package engine

import (
	"context"
	"database/sql"
	"sort"
	"time"
)

// ImportEntries appends entries with their own ids (a migration from Redis), in one
// transaction: every id must exceed the stream's last id, as XADD with explicit ids
// demands. Because the stream's last id is updated in the same transaction, it is the
// migration's checkpoint: a resumed copy starts after it, and no page is half-written.
func (e *Engine) ImportEntries(ctx context.Context, stream string, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		s, err := e.lockStream(ctx, tx, stream, true)
		if err != nil {
			return err
		}
		rows := make([]pendingRow, 0, len(entries))
		for _, en := range entries {
			if !s.last.Less(en.ID) {
				return errIDTooSmall
			}
			if len(en.Fields) == 0 || len(en.Fields)%2 != 0 {
				return errWrongArgs("xadd")
			}
			if s.length == 0 {
				s.first = en.ID
			}
			s.last, s.length, s.added = en.ID, s.length+1, s.added+1
			rows = append(rows, pendingRow{s.sid, en.ID, encodeFields(en.Fields)})
		}
		if err := e.insertEntries(ctx, tx, rows); err != nil {
			return err
		}
		return e.saveStream(ctx, tx, s)
	})
	if err == nil {
		e.waiters.notify(stream)
	}
	return err
}

// LastID returns the stream's last id (0-0, false when it does not exist).
func (e *Engine) LastID(ctx context.Context, stream string) (ID, bool, error) {
	var id ID
	var ok bool
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		s, err := e.selectStream(ctx, tx, stream)
		if s != nil {
			id, ok = s.last, true
		}
		return err
	})
	return id, ok, err
}

// StreamState is the consumer-side state of a stream copied from Redis: the counters
// XINFO STREAM shows and every group with its consumers and pending entries.
type StreamState struct {
	LastGeneratedID   ID
	EntriesAdded      int64
	MaxDeletedEntryID ID
	Groups            []GroupState
}

// GroupState is one group's state.
type GroupState struct {
	Name            string
	LastDeliveredID ID
	EntriesRead     int64 // -1: unknown (Redis's nil)
	Consumers       []string
	Pending         []PendingState
}

// PendingState is one pending entry.
type PendingState struct {
	ID         ID
	Consumer   string
	Idle       time.Duration
	Deliveries int64
}

// ImportState sets the stream's counters and replaces its groups' state with st, in
// one transaction. Running it again with the same st gives the same result, so an
// interrupted migration simply repeats it. The stream must exist (ImportEntries or
// CreateStream first); groups not in st are left alone.
func (e *Engine) ImportState(ctx context.Context, stream string, st StreamState) error {
	return e.inTx(ctx, func(tx *sql.Tx) error {
		s, err := e.lockStream(ctx, tx, stream, true)
		if err != nil {
			return err
		}
		if s.last.Less(st.LastGeneratedID) {
			s.last = st.LastGeneratedID
		}
		if st.EntriesAdded >= s.length {
			s.added = st.EntriesAdded
		}
		s.maxDel = st.MaxDeletedEntryID
		if err := e.saveStream(ctx, tx, s); err != nil {
			return err
		}
		now := e.nowMs()
		for _, g := range st.Groups {
			gr := &group{name: g.Name, last: g.LastDeliveredID, entriesRead: g.EntriesRead}
			if _, err := e.exec(ctx, tx, `INSERT INTO kdb_groups (sid, name, last_ms, last_seq, entries_read) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (sid, name) DO UPDATE SET last_ms = excluded.last_ms, last_seq = excluded.last_seq, entries_read = excluded.entries_read`,
				s.sid, g.Name, g.LastDeliveredID.Ms, g.LastDeliveredID.Seq, gr.readArg()); err != nil {
				return err
			}
			names := append([]string(nil), g.Consumers...)
			for _, p := range g.Pending {
				names = append(names, p.Consumer)
			}
			sort.Strings(names)
			for i, c := range names {
				if i > 0 && names[i-1] == c {
					continue
				}
				if _, err := e.exec(ctx, tx, `INSERT INTO kdb_consumers (sid, grp, name, seen_time, active_time) VALUES (?, ?, ?, ?, -1)
					ON CONFLICT (sid, grp, name) DO NOTHING`, s.sid, g.Name, c, now); err != nil {
					return err
				}
			}
			for _, q := range []string{`DELETE FROM kdb_pending WHERE sid = ? AND grp = ?`, `DELETE FROM kdb_pending_runs WHERE sid = ? AND grp = ?`} {
				if _, err := e.exec(ctx, tx, q, s.sid, g.Name); err != nil {
					return err
				}
			}
			for _, p := range g.Pending {
				if _, err := e.exec(ctx, tx, `INSERT INTO kdb_pending (sid, grp, ms, seq, consumer, delivery_time, delivery_count)
					VALUES (?, ?, ?, ?, ?, ?, ?)`, s.sid, g.Name, p.ID.Ms, p.ID.Seq, p.Consumer, now-p.Idle.Milliseconds(), p.Deliveries); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
