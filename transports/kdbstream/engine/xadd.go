package engine

import (
	"context"
	"database/sql"
	"math"
	"strings"

	"github.com/koder/eventhub/hub"
)

// Add is one XADD.
type Add struct {
	Stream     string
	ID         string // "" or "*" for an automatic id, "<ms>-*", or an explicit id
	NoMkStream bool
	Trim       *Trim
	Values     []string // flat field, value pairs
}

// AddResult is one XADD's reply: the id, or Err; Nil when NOMKSTREAM met no stream.
type AddResult struct {
	ID  ID
	Nil bool
	Err error
}

type appendReq struct {
	ctx  context.Context
	adds []Add
	res  []AddResult
	err  error
	done chan struct{}
}

// XAdd mirrors XADD. ok is false when NOMKSTREAM found no stream (Redis's nil reply).
func (e *Engine) XAdd(ctx context.Context, a Add) (id ID, ok bool, err error) {
	res, err := e.Append(ctx, []Add{a})
	if err != nil {
		return ID{}, false, err
	}
	return res[0].ID, !res[0].Nil, res[0].Err
}

// Append runs several XADDs in order in one group-committed transaction, shared with
// concurrent callers. It returns once they are durable (per the Synchronous setting);
// err is a whole-transaction failure, a single XADD's refusal is in its AddResult.
func (e *Engine) Append(ctx context.Context, adds []Add) ([]AddResult, error) {
	if err := checkAdds(adds); err != nil {
		return nil, err
	}
	r := &appendReq{ctx: ctx, adds: adds, done: make(chan struct{})}
	e.closeMu.RLock()
	if e.closed {
		e.closeMu.RUnlock()
		return nil, errClosed
	}
	select {
	case e.appends <- r:
	case <-ctx.Done():
		e.closeMu.RUnlock()
		return nil, ctx.Err()
	}
	e.closeMu.RUnlock()
	select {
	case <-r.done:
		return r.res, r.err
	case <-ctx.Done():
		// The append may still commit: the caller sees an ambiguous failure, as with a
		// network error after XADD was sent.
		return nil, ctx.Err()
	}
}

// AppendTx runs adds in tx, a transaction on the handle the engine shares
// (Config.DB, e.g. a ledger transaction that also writes the outbox's other records),
// instead of the committer's own: the entries commit or roll back with tx. The
// returned committed must be called once tx has committed (it wakes the readers
// blocked on the streams appended to); nothing is to be called on a rollback. err is a
// failure of tx as a whole (roll it back), a single XADD's refusal is in its AddResult
// as with Append. It fails with FailedPrecondition on an engine that shares no handle.
func (e *Engine) AppendTx(ctx context.Context, tx *sql.Tx, adds []Add) (res []AddResult, committed func(), err error) {
	if e.cfg.DB == nil {
		return nil, nil, hub.Errorf(hub.FailedPrecondition, "kdbstream: AppendTx needs an engine on a shared handle (Config.DB)")
	}
	if err := e.readyToAppend(ctx, adds); err != nil {
		return nil, nil, err
	}
	r := &appendReq{ctx: ctx, adds: adds}
	touched, err := e.applyAdds(tx, []*appendReq{r}, false)
	if err != nil {
		return nil, nil, classify(err)
	}
	return r.res, func() {
		for _, s := range touched {
			e.waiters.notify(s)
		}
	}, nil
}

// readyToAppend is the check of an append in a caller's transaction: adds well formed,
// the engine open and its tables made.
func (e *Engine) readyToAppend(ctx context.Context, adds []Add) error {
	if err := checkAdds(adds); err != nil {
		return err
	}
	if e.isClosed() {
		return errClosed
	}
	return e.ensureReady(ctx)
}

// checkAdds refuses an XADD without field-value pairs, as Redis does.
func checkAdds(adds []Add) error {
	for _, a := range adds {
		if len(a.Values) == 0 || len(a.Values)%2 != 0 {
			return errWrongArgs("xadd")
		}
	}
	return nil
}

// committer is the group-commit loop: it takes every request waiting (up to MaxBatch
// entries) and commits them in one transaction, so N concurrent publishers cost one
// fsync instead of N. No timer: a batch is whatever queued while the previous commit ran.
func (e *Engine) committer() {
	defer e.wg.Done()
	for {
		var first *appendReq
		select {
		case first = <-e.appends:
		case <-e.done:
			for {
				select {
				case r := <-e.appends:
					e.commitBatch([]*appendReq{r})
				default:
					return
				}
			}
		}
		batch := []*appendReq{first}
		n := len(first.adds)
	drain:
		for n < e.cfg.MaxBatch {
			select {
			case r := <-e.appends:
				batch = append(batch, r)
				n += len(r.adds)
			default:
				break drain
			}
		}
		e.commitBatch(batch)
	}
}

func (e *Engine) commitBatch(batch []*appendReq) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			close(r.done)
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	var touched []string
	ctx := context.Background()
	err := e.ensureReady(ctx)
	handled := false
	if err == nil {
		touched, handled, err = e.d.appendFast(ctx, live)
		err = classify(err)
	}
	if err == nil && !handled {
		touched, err = e.commitGeneral(ctx, live)
	}
	for _, r := range live {
		r.err = err
		if err != nil {
			r.res = nil
		}
		close(r.done)
	}
	if err == nil {
		for _, s := range touched {
			e.waiters.notify(s)
		}
	}
}

type pendingRow struct {
	sid    int64
	id     ID
	fields []byte
}

// commitGeneral commits a batch on the general path: one transaction (lockorder.go on
// PostgreSQL's lock waits).
func (e *Engine) commitGeneral(ctx context.Context, live []*appendReq) ([]string, error) {
	var touched []string
	err := e.inTxLocking(ctx, func(tx *sql.Tx, noWait bool) error {
		var err error
		touched, err = e.applyAdds(tx, live, noWait)
		return err
	})
	return touched, err
}

// applyAdds runs the adds of reqs in tx. With noWait, every stream but the first in
// name order is locked with NOWAIT (lockorder.go).
func (e *Engine) applyAdds(tx *sql.Tx, reqs []*appendReq, noWait bool) ([]string, error) {
	ctx := context.Background()
	// Lock every stream in name order (no deadlock between concurrent batches on PostgreSQL).
	create := map[string]bool{}
	for _, r := range reqs {
		for _, a := range r.adds {
			create[a.Stream] = create[a.Stream] || !a.NoMkStream
		}
	}
	names := make([]string, 0, len(create))
	for n := range create {
		names = append(names, n)
	}
	streams, err := e.lockStreams(ctx, tx, names, create, noWait)
	if err != nil {
		return nil, err
	}
	var rows []pendingRow
	flush := func() error {
		err := e.insertEntries(ctx, tx, rows)
		rows = rows[:0]
		return err
	}
	now := e.nowMs()
	dirty := map[string]bool{}
	for _, r := range reqs {
		r.res = make([]AddResult, len(r.adds))
		for i, a := range r.adds {
			s := streams[a.Stream]
			if s == nil {
				r.res[i].Nil = true
				continue
			}
			row, ok := s.add(r, i, now)
			if !ok {
				continue
			}
			dirty[a.Stream] = true
			rows = append(rows, row)
			if a.Trim != nil && trimDue(s, a.Trim) {
				if err := flush(); err != nil {
					return nil, err
				}
				if _, err := e.trim(ctx, tx, s, a.Trim); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(dirty) == 1 {
		// The usual publisher batch (one stream): the dialect writes entries and stream
		// row in as few round trips as it can (one statement on PostgreSQL).
		for n := range dirty {
			return []string{n}, e.d.appendRows(ctx, tx, rows, streams[n])
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	var touched []string
	for _, n := range names {
		if !dirty[n] {
			continue
		}
		touched = append(touched, n)
		if err := e.d.saveAppended(ctx, tx, streams[n]); err != nil {
			return nil, err
		}
	}
	return touched, nil
}

// insertEntries writes rows with multi-row INSERTs (one statement per 200 rows: far
// fewer round trips and driver calls than one Exec per row, well under SQLite's
// parameter limit).
func (e *Engine) insertEntries(ctx context.Context, tx *sql.Tx, rows []pendingRow) error {
	return insertEntries(ctx, e.d, tx, rows)
}

// insertEntries is Engine.insertEntries on d (dialects build appendRows on it).
func insertEntries(ctx context.Context, d dialect, tx *sql.Tx, rows []pendingRow) error {
	const chunk = insertChunk
	for len(rows) > 0 {
		n := min(len(rows), chunk)
		var b strings.Builder
		b.WriteString(`INSERT INTO kdb_entries (sid, ms, seq, fields) VALUES `)
		args := make([]any, 0, 4*n)
		for i, r := range rows[:n] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`(?,?,?,?)`)
			args = append(args, r.sid, r.id.Ms, r.id.Seq, r.fields)
		}
		// Through the dialect's statement cache: on SQLite each batch size is parsed
		// once (at most insertChunk texts), then only bound and stepped.
		st, err := d.stmt(ctx, tx, b.String())
		if err != nil {
			return err
		}
		if _, err := st.exec(ctx, tx, args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// add applies r's i-th XADD to s in memory (its id, first/last/length/entries_added)
// and records the id or the refusal in r.res[i]; ok is false when it was refused.
func (s *stream) add(r *appendReq, i int, now int64) (pendingRow, bool) {
	id, err := nextID(s, r.adds[i].ID, now)
	if err != nil {
		r.res[i].Err = err
		return pendingRow{}, false
	}
	if s.length == 0 {
		s.first = id
	}
	s.last = id
	s.length++
	s.added++
	r.res[i].ID = id
	return pendingRow{s.sid, id, encodeFields(r.adds[i].Values)}, true
}

// nextID is XADD's id rule (t_stream.c streamAppendItem): "*" takes the clock's ms, or
// the top id's ms with seq+1 when the clock is behind (so ids stay increasing when the
// clock steps back); "<ms>-*" picks the seq; an explicit id must exceed the top id.
func nextID(s *stream, spec string, now int64) (ID, error) {
	if spec == "" || spec == "*" {
		if now > s.last.Ms {
			return ID{now, 0}, nil
		}
		if s.last.Seq == math.MaxInt64 {
			if s.last.Ms == math.MaxInt64 {
				return ID{}, errSeqExhausted
			}
			return ID{s.last.Ms + 1, 0}, nil
		}
		return ID{s.last.Ms, s.last.Seq + 1}, nil
	}
	if ms, ok := strings.CutSuffix(spec, "-*"); ok {
		m, err := parseU63(ms)
		if err != nil {
			return ID{}, errInvalidID
		}
		switch {
		case m < s.last.Ms:
			return ID{}, errIDTooSmall
		case m == s.last.Ms:
			if s.last.Seq == math.MaxInt64 {
				return ID{}, errIDTooSmall
			}
			return ID{m, s.last.Seq + 1}, nil
		}
		return ID{m, 0}, nil
	}
	id, err := ParseID(spec, 0)
	if err != nil {
		return ID{}, err
	}
	if id.IsZero() {
		return ID{}, errIDZero
	}
	if id.Cmp(s.last) <= 0 {
		return ID{}, errIDTooSmall
	}
	return id, nil
}

// insertChunk is the most rows one multi-row INSERT carries (and the most entries
// PostgreSQL's one-statement append takes).
const insertChunk = 200

// assignIDs is applyAdds' id loop for one stream, without a transaction (the
// dialects' fast appends): it fills each request's results, advances s and returns
// the rows to insert, or trimNeeded when an XADD's trim would remove entries (the
// general path then does it).
func assignIDs(s *stream, reqs []*appendReq, now int64) (rows []pendingRow, trimNeeded bool) {
	for _, r := range reqs {
		r.res = make([]AddResult, len(r.adds))
		for i, a := range r.adds {
			row, ok := s.add(r, i, now)
			if !ok {
				continue
			}
			rows = append(rows, row)
			if a.Trim != nil && trimDue(s, a.Trim) {
				return nil, true
			}
		}
	}
	return rows, false
}

// trimDue reports whether t would remove anything from s now (checked in memory, so a
// batch whose "~" trim has nothing to do costs no statement).
func trimDue(s *stream, t *Trim) bool {
	if t.MinID {
		return s.length > 0 && s.first.Less(t.Min)
	}
	over := s.length - t.MaxLen
	if t.Approx {
		return over >= approxSlack
	}
	return over > 0
}
