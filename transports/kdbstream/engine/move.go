package engine

import (
	"context"
	"database/sql"
)

// ReplayEntry appends fields to dst (a new entry, "*" id, trimmed by trim when not
// nil) and deletes entry id from src, in one transaction; ok is false, with nothing
// written, when src has no entry id. It is the dead-letter replay of the Redis
// transport's script (check, XADD, XDEL as one atomic step), which the Redis protocol
// front runs for it.
func (e *Engine) ReplayEntry(ctx context.Context, src, id, dst string, trim *Trim, fields []string) (ID, bool, error) {
	pid, err := ParseStrictID(id)
	if err != nil {
		return ID{}, false, err
	}
	if len(fields) == 0 || len(fields)%2 != 0 {
		return ID{}, false, errWrongArgs("xadd")
	}
	var nid ID
	var ok bool
	err = e.inTxLockingOpen(ctx, func(tx *sql.Tx, noWait bool) error {
		ok = false
		locked, err := e.lockPair(ctx, tx, src, dst, false, true, noWait)
		if err != nil {
			return err
		}
		s := locked[src]
		if s == nil {
			return nil
		}
		if ok, err = e.entryExists(ctx, tx, s.sid, pid); err != nil || !ok {
			return err
		}
		d := locked[dst]
		if nid, err = e.appendOne(ctx, tx, d, fields); err != nil {
			return err
		}
		if trim != nil && trimDue(d, trim) {
			if _, err := e.trim(ctx, tx, d, trim); err != nil {
				return err
			}
		}
		if err := e.d.saveAppended(ctx, tx, d); err != nil {
			return err
		}
		if src == dst {
			s = d
		}
		if _, err := e.exec(ctx, tx, `DELETE FROM kdb_entries WHERE sid = ? AND ms = ? AND seq = ?`, s.sid, pid.Ms, pid.Seq); err != nil {
			return err
		}
		s.length--
		if s.maxDel.Less(pid) {
			s.maxDel = pid
		}
		if err := e.refreshFirst(ctx, tx, s); err != nil {
			return err
		}
		return e.saveStream(ctx, tx, s)
	})
	if err == nil && ok {
		e.waiters.notify(dst)
	}
	return nid, ok, err
}

// lockPair locks two streams in name order (no deadlock between concurrent moves on
// PostgreSQL; noWait as in lockStreams); createA/createB make a missing one.
func (e *Engine) lockPair(ctx context.Context, tx *sql.Tx, a, b string, createA, createB, noWait bool) (map[string]*stream, error) {
	create := map[string]bool{}
	create[a] = createA
	create[b] = create[b] || createB
	names := []string{a}
	if b != a {
		names = append(names, b)
	}
	return e.lockStreams(ctx, tx, names, create, noWait)
}

// appendOne appends one "*" entry to a locked stream (row saved by the caller).
func (e *Engine) appendOne(ctx context.Context, tx *sql.Tx, d *stream, fields []string) (ID, error) {
	nid, err := nextID(d, "*", e.nowMs())
	if err != nil {
		return ID{}, err
	}
	if d.length == 0 {
		d.first = nid
	}
	d.last, d.length, d.added = nid, d.length+1, d.added+1
	return nid, e.insertEntries(ctx, tx, []pendingRow{{d.sid, nid, encodeFields(fields)}})
}
