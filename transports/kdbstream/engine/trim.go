package engine

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
)

// approxSlack is how far past MAXLEN a "~" trim lets a stream grow before trimming.
// Redis trims whole radix-tree nodes (stream-node-max-entries, 100); trimming in steps
// of at least 100 rows keeps DELETEs rare the same way. "~" may trim less than "=",
// never more, as in Redis.
const approxSlack = 100

// Trim is the MAXLEN/MINID clause of XADD and XTRIM.
type Trim struct {
	MinID  bool  // MINID instead of MAXLEN
	Approx bool  // "~"
	MaxLen int64 // MAXLEN threshold
	Min    ID    // MINID threshold
	Limit  int64 // LIMIT (only with "~"); 0 = none; -1 = Redis default (100 nodes' worth)
}

// parseTrim parses "MAXLEN|MINID [=|~] threshold [LIMIT n]" starting at args[i];
// it returns the index after the clause.
func parseTrim(args []string, i int) (*Trim, int, error) {
	t := &Trim{Limit: -1}
	t.MinID = strings.EqualFold(args[i], "MINID")
	i++
	if i < len(args) && (args[i] == "~" || args[i] == "=") {
		t.Approx = args[i] == "~"
		i++
	}
	if i >= len(args) {
		return nil, i, errSyntax
	}
	if t.MinID {
		id, err := ParseID(args[i], 0)
		if err != nil {
			return nil, i, err
		}
		t.Min = id
	} else {
		n, err := strconv.ParseInt(args[i], 10, 64)
		if err != nil {
			return nil, i, errNotInteger
		}
		if n < 0 {
			return nil, i, cmdErr(errSyntax.code, "ERR The MAXLEN argument must be >= 0.")
		}
		t.MaxLen = n
	}
	i++
	if i+1 < len(args) && strings.EqualFold(args[i], "LIMIT") {
		n, err := strconv.ParseInt(args[i+1], 10, 64)
		if err != nil || n < 0 {
			return nil, i, errNotInteger
		}
		if !t.Approx {
			return nil, i, cmdErr(errSyntax.code, "ERR syntax error, LIMIT cannot be used without the special ~ option")
		}
		t.Limit = n
		i += 2
	}
	return t, i, nil
}

// trim applies t to s inside tx and returns how many entries it removed. Trimming does
// not touch pending lists (Redis's default KEEPREF): a pending entry trimmed away is
// reported as deleted by XAUTOCLAIM and dropped by XCLAIM, as in Redis 7.
func (e *Engine) trim(ctx context.Context, tx *sql.Tx, s *stream, t *Trim) (int64, error) {
	if s.length == 0 {
		return 0, nil
	}
	var bound ID // delete ids <= bound
	var n int64  // how many that is (MAXLEN) or at most (MINID)
	limit := t.Limit
	if t.Approx && limit < 0 {
		limit = 100 * approxSlack
	}
	if !t.Approx {
		limit = 0
	}
	if !t.MinID {
		n = s.length - t.MaxLen
		if n <= 0 || (t.Approx && n < approxSlack) {
			return 0, nil
		}
		if limit > 0 && n > limit {
			n = limit
		}
		if err := e.queryRow(ctx, tx, `SELECT ms, seq FROM kdb_entries WHERE sid = ? ORDER BY ms, seq LIMIT 1 OFFSET ?`,
			s.sid, n-1).Scan(&bound.Ms, &bound.Seq); err != nil {
			return 0, err
		}
	} else {
		if s.first.Cmp(t.Min) >= 0 {
			return 0, nil
		}
		p, _ := t.Min.Prev()
		bound = p
		if limit > 0 {
			var lb ID
			err := e.queryRow(ctx, tx, `SELECT ms, seq FROM kdb_entries WHERE sid = ? ORDER BY ms, seq LIMIT 1 OFFSET ?`,
				s.sid, limit-1).Scan(&lb.Ms, &lb.Seq)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return 0, err
			}
			if err == nil && lb.Less(bound) {
				bound = lb
			}
		}
	}
	res, err := e.exec(ctx, tx, `DELETE FROM kdb_entries WHERE sid = ? AND (ms, seq) <= (?, ?)`,
		s.sid, bound.Ms, bound.Seq)
	if err != nil {
		return 0, err
	}
	n, err = res.RowsAffected()
	if err != nil {
		return 0, err
	}
	s.length -= n
	return n, e.refreshFirst(ctx, tx, s)
}

// XTrim mirrors XTRIM and returns the number of entries removed.
func (e *Engine) XTrim(ctx context.Context, name string, t Trim) (int64, error) {
	var n int64
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		s, err := e.lockStream(ctx, tx, name, false)
		if err != nil || s == nil {
			return err
		}
		if n, err = e.trim(ctx, tx, s, &t); err != nil || n == 0 {
			return err
		}
		return e.saveStream(ctx, tx, s)
	})
	return n, err
}
