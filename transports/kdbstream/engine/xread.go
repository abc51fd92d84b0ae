package engine

import (
	"context"
	"database/sql"
	"math"
	"reflect"
	"time"
)

// StreamEntries is one stream's part of an XREAD or XREADGROUP reply.
type StreamEntries struct {
	Stream  string
	Entries []Entry
	// Deliveries is, for XREADGROUP, each entry's delivery count after this read.
	Deliveries []int64
}

// rangeEntries reads a stream's entries with from <= id <= to, ascending or (rev)
// descending, at most count (count <= 0: all).
func (e *Engine) rangeEntries(ctx context.Context, tx *sql.Tx, sid int64, from, to ID, count int64, rev bool) ([]Entry, error) {
	if count <= 0 {
		count = math.MaxInt64
	}
	q := `SELECT ms, seq, fields FROM kdb_entries WHERE sid = ?
			AND (ms, seq) >= (?, ?) AND (ms, seq) <= (?, ?) ORDER BY ms, seq LIMIT ?`
	if rev {
		q = `SELECT ms, seq, fields FROM kdb_entries WHERE sid = ?
			AND (ms, seq) >= (?, ?) AND (ms, seq) <= (?, ?) ORDER BY ms DESC, seq DESC LIMIT ?`
	}
	rows, err := e.query(ctx, tx, q, sid, from.Ms, from.Seq, to.Ms, to.Seq, count)
	if err != nil {
		return nil, err
	}
	out, err := e.scanEntries(rows)
	if out == nil {
		out = []Entry{}
	}
	return out, err
}

// XRevRange mirrors XREVRANGE <stream> <end> <start> [COUNT n]: XRANGE's interval,
// newest first; count <= 0 means all.
func (e *Engine) XRevRange(ctx context.Context, stream, end, start string, count int64) ([]Entry, error) {
	from, _, err := parseRangeStart(start)
	if err != nil {
		return nil, err
	}
	to, _, err := parseRangeEnd(end)
	if err != nil {
		return nil, err
	}
	out := []Entry{}
	err = e.inTx(ctx, func(tx *sql.Tx) error {
		out = []Entry{}
		s, err := e.selectStream(ctx, tx, stream)
		if err != nil || s == nil || to.Less(from) {
			return err
		}
		out, err = e.rangeEntries(ctx, tx, s.sid, from, to, count, true)
		return err
	})
	return out, err
}

// XRead mirrors XREAD [COUNT n] [BLOCK ms] STREAMS <key>... <id>...: for each stream,
// the entries after its id ("$": the stream's last id when the call starts). It returns
// only the streams that have such entries, in argument order; nil (Redis's nil reply)
// when none has. block < 0 does not block; block == 0 waits until an entry arrives or
// ctx ends. A blocked XREAD costs no query while nothing is appended: it waits on the
// engine's append notifications (in-process, and PostgreSQL's NOTIFY from other
// processes).
func (e *Engine) XRead(ctx context.Context, keys, ids []string, count int64, block time.Duration) ([]StreamEntries, error) {
	if len(keys) != len(ids) || len(keys) == 0 {
		return nil, errUnbalancedXRead
	}
	after := make([]ID, len(ids))
	var dollar []int
	for i, id := range ids {
		switch id {
		case "$":
			dollar = append(dollar, i)
		case ">":
			return nil, errXReadGT
		default:
			p, err := ParseID(id, 0)
			if err != nil {
				return nil, err
			}
			after[i] = p
		}
	}
	if len(dollar) > 0 {
		if err := e.inTx(ctx, func(tx *sql.Tx) error {
			for _, i := range dollar {
				s, err := e.selectStream(ctx, tx, keys[i])
				if err != nil {
					return err
				}
				after[i] = ID{}
				if s != nil {
					after[i] = s.last
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return blockOn(ctx, e, keys, block, func() ([]StreamEntries, error) {
		return e.readAfter(ctx, keys, after, count)
	})
}

// readAfter is one non-blocking XREAD pass.
func (e *Engine) readAfter(ctx context.Context, keys []string, after []ID, count int64) ([]StreamEntries, error) {
	var out []StreamEntries
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		out = nil
		for i, k := range keys {
			s, err := e.selectStream(ctx, tx, k)
			if err != nil {
				return err
			}
			if s == nil || s.length == 0 || !after[i].Less(s.last) {
				continue
			}
			from, ok := after[i].Next()
			if !ok {
				continue
			}
			es, err := e.rangeEntries(ctx, tx, s.sid, from, MaxID, count, false)
			if err != nil {
				return err
			}
			if len(es) > 0 {
				out = append(out, StreamEntries{Stream: k, Entries: es})
			}
		}
		return nil
	})
	return out, err
}

// blockOn runs try until it returns something, an error, or the block ends (see
// XRead's block). The wake-up channels are taken before each try, so an append between
// the try and the wait is not missed.
func blockOn(ctx context.Context, e *Engine, keys []string, block time.Duration, try func() ([]StreamEntries, error)) ([]StreamEntries, error) {
	var deadline <-chan time.Time
	if block > 0 {
		t := time.NewTimer(block)
		defer t.Stop()
		deadline = t.C
	}
	for {
		wake := e.waiters.waitAny(keys)
		res, err := try()
		if err != nil || res != nil || block < 0 {
			return res, err
		}
		switch waitWake(ctx, e, wake, deadline) {
		case wokeDeadline:
			return nil, nil
		case wokeCtx:
			return nil, ctx.Err()
		case wokeClosed:
			return nil, errClosed
		}
	}
}

type wokeBy int

const (
	wokeAppend wokeBy = iota
	wokeDeadline
	wokeCtx
	wokeClosed
)

// waitWake waits for any of the wake channels, the deadline, ctx or Close. One
// channel (the usual single-stream read) is a plain select; several go through
// reflect.Select, which costs an allocation per wait, not a goroutine.
func waitWake(ctx context.Context, e *Engine, wake []<-chan struct{}, deadline <-chan time.Time) wokeBy {
	if len(wake) == 1 {
		select {
		case <-wake[0]:
			return wokeAppend
		case <-deadline:
			return wokeDeadline
		case <-ctx.Done():
			return wokeCtx
		case <-e.done:
			return wokeClosed
		}
	}
	cases := make([]reflect.SelectCase, 0, len(wake)+3)
	cases = append(cases,
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(deadline)},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(e.done)})
	for _, c := range wake {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)})
	}
	switch i, _, _ := reflect.Select(cases); i {
	case 0:
		return wokeDeadline
	case 1:
		return wokeCtx
	case 2:
		return wokeClosed
	}
	return wokeAppend
}
