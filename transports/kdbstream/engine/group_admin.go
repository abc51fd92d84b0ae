package engine

import (
	"context"
	"database/sql"
	"time"
)

// The XGROUP subcommands besides CREATE (Redis 7.0 t_stream.c xgroupCommand): each
// locks the stream's row like every other command, so it is serialised with reads and
// acks on the same stream, across processes on PostgreSQL.

// lockGroupAdmin locks the stream for an XGROUP subcommand: a missing stream is
// Redis's "requires the key to exist" error, a missing group (when want) is
// "NOGROUP No such consumer group ...".
func (e *Engine) lockGroupAdmin(ctx context.Context, tx *sql.Tx, stream, grp string, want bool) (*stream, *group, error) {
	s, err := e.lockStream(ctx, tx, stream, false)
	if err != nil {
		return nil, nil, err
	}
	if s == nil {
		return nil, nil, errNoKeyForGroup
	}
	g, err := e.loadGroup(ctx, tx, s.sid, grp)
	if err != nil {
		return nil, nil, err
	}
	if g == nil && want {
		return nil, nil, errNoSuchGroup(stream, grp)
	}
	return s, g, nil
}

// GroupSetID mirrors XGROUP SETID <stream> <group> <id|$> [ENTRIESREAD n]: it moves the
// group's last delivered id (back or forth) and sets its entries-read counter (n, or
// unknown when entriesRead < 0, as Redis 7.0 does when ENTRIESREAD is not given).
// Pending entries are left as they are.
func (e *Engine) GroupSetID(ctx context.Context, stream, grp, id string, entriesRead int64) error {
	return e.inTx(ctx, func(tx *sql.Tx) error {
		s, g, err := e.lockGroupAdmin(ctx, tx, stream, grp, true)
		if err != nil {
			return err
		}
		if id == "$" {
			g.last = s.last
		} else if g.last, err = ParseStrictID(id); err != nil {
			return err
		}
		g.entriesRead = entriesRead
		return e.saveGroup(ctx, tx, s.sid, g)
	})
}

// GroupDestroy mirrors XGROUP DESTROY <stream> <group>: the group, its consumers and
// its pending list go; it reports whether the group existed. Readers blocked on the
// group are woken and get NOGROUP.
func (e *Engine) GroupDestroy(ctx context.Context, stream, grp string) (bool, error) {
	var existed bool
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		s, g, err := e.lockGroupAdmin(ctx, tx, stream, grp, false)
		if err != nil || g == nil {
			existed = false
			return err
		}
		existed = true
		for _, q := range []string{
			`DELETE FROM kdb_pending WHERE sid = ? AND grp = ?`,
			`DELETE FROM kdb_pending_runs WHERE sid = ? AND grp = ?`,
			`DELETE FROM kdb_consumers WHERE sid = ? AND grp = ?`,
			`DELETE FROM kdb_groups WHERE sid = ? AND name = ?`,
		} {
			if _, err := e.exec(ctx, tx, q, s.sid, grp); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && existed {
		e.waiters.notify(stream)
	}
	return existed, err
}

// CreateConsumer mirrors XGROUP CREATECONSUMER <stream> <group> <consumer>: it reports
// whether the consumer was created (false: it existed).
func (e *Engine) CreateConsumer(ctx context.Context, stream, grp, consumer string) (bool, error) {
	var created bool
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		s, _, err := e.lockGroupAdmin(ctx, tx, stream, grp, true)
		if err != nil {
			return err
		}
		res, err := e.exec(ctx, tx, `INSERT INTO kdb_consumers (sid, grp, name, seen_time, active_time) VALUES (?, ?, ?, ?, -1)
			ON CONFLICT (sid, grp, name) DO NOTHING`, s.sid, grp, consumer, e.nowMs())
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		created = n == 1
		return err
	})
	return created, err
}

// DelConsumer mirrors XGROUP DELCONSUMER <stream> <group> <consumer>: the consumer and
// its pending entries go (they are no longer pending for anyone); it returns how many
// entries it had pending. A missing consumer is 0.
func (e *Engine) DelConsumer(ctx context.Context, stream, grp, consumer string) (int64, error) {
	var n int64
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		n = 0
		s, _, err := e.lockGroupAdmin(ctx, tx, stream, grp, true)
		if err != nil {
			return err
		}
		// The consumer's runs go whole (a run has one owner); the others' stay runs.
		var inRuns int64
		if err := e.queryRow(ctx, tx, `SELECT coalesce(sum(n), 0) FROM kdb_pending_runs WHERE sid = ? AND grp = ? AND consumer = ?`,
			s.sid, grp, consumer).Scan(&inRuns); err != nil {
			return err
		}
		if inRuns > 0 {
			if _, err := e.exec(ctx, tx, `DELETE FROM kdb_pending_runs WHERE sid = ? AND grp = ? AND consumer = ?`, s.sid, grp, consumer); err != nil {
				return err
			}
		}
		res, err := e.exec(ctx, tx, `DELETE FROM kdb_pending WHERE sid = ? AND grp = ? AND consumer = ?`, s.sid, grp, consumer)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		n += inRuns
		_, err = e.exec(ctx, tx, `DELETE FROM kdb_consumers WHERE sid = ? AND grp = ? AND name = ?`, s.sid, grp, consumer)
		return err
	})
	return n, err
}

// ConsumerInfo is one row of XINFO CONSUMERS (Redis 7.0: name, pending, idle).
type ConsumerInfo struct {
	Name    string
	Pending int64
	Idle    time.Duration // since the consumer was last seen (a read, a claim)
}

// XInfoConsumers mirrors XINFO CONSUMERS <stream> <group> (consumers in name byte
// order, as Redis's rax). A missing stream is "ERR no such key"; a missing group is
// NOGROUP.
func (e *Engine) XInfoConsumers(ctx context.Context, stream, grp string) ([]ConsumerInfo, error) {
	var out []ConsumerInfo
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		out = []ConsumerInfo{}
		s, err := e.selectStream(ctx, tx, stream)
		if err != nil {
			return err
		}
		if s == nil {
			return errNoSuchKey
		}
		g, err := e.loadGroup(ctx, tx, s.sid, grp)
		if err != nil {
			return err
		}
		if g == nil {
			return errNoSuchGroup(stream, grp)
		}
		rows, err := e.query(ctx, tx, `SELECT c.name, c.seen_time,
			(SELECT COUNT(*) FROM kdb_pending p WHERE p.sid = c.sid AND p.grp = c.grp AND p.consumer = c.name) +
			(SELECT COALESCE(SUM(r.n), 0) FROM kdb_pending_runs r WHERE r.sid = c.sid AND r.grp = c.grp AND r.consumer = c.name)
			FROM kdb_consumers c WHERE c.sid = ? AND c.grp = ?`, s.sid, grp)
		if err != nil {
			return err
		}
		defer rows.Close()
		now := e.nowMs()
		for rows.Next() {
			var ci ConsumerInfo
			var seen int64
			if err := rows.Scan(&ci.Name, &seen, &ci.Pending); err != nil {
				return err
			}
			ci.Idle = time.Duration(max(now-seen, 0)) * time.Millisecond
			out = append(out, ci)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		sortByName(out, func(c ConsumerInfo) string { return c.Name })
		return nil
	})
	return out, err
}

// sortByName orders xs by name in byte order (SQL collations may differ).
func sortByName[T any](xs []T, name func(T) string) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && name(xs[j]) < name(xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}
