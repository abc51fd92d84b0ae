package engine

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/hub"
)

// AppendPgTx is AppendTx on PostgreSQL for a transaction of another pgx pool on the
// same database and schema (a ledger's, whose River jobs are pgx transactions: see
// SameDatabase): the entries of adds are written in tx and commit or roll back with
// it. Each stream's row is locked (FOR UPDATE, created unless every add to it is
// NOMKSTREAM) in name order, the ids computed from the locked row, and the entries,
// the row and the NOTIFY that wakes readers in every process written by one
// statement per insertChunk entries (the committer's own statement, insertAndSaveSQL).
// The row stays locked until tx ends, so concurrent transactions appending to one
// stream take turns: keep the append the last write of tx.
//
// Trims ("MAXLEN ~", MINID) are not run in tx: committed (to be called once tx has
// committed, never otherwise) wakes this process's blocked readers and runs each
// stream's last trim that is due by then, as an XTRIM of its own.
func (e *Engine) AppendPgTx(ctx context.Context, tx pgx.Tx, adds []Add) (res []AddResult, committed func(), err error) {
	d, ok := e.d.(*postgresDialect)
	if !ok {
		return nil, nil, hub.Errorf(hub.FailedPrecondition, "kdbstream: AppendPgTx needs an engine on PostgreSQL")
	}
	if err := e.readyToAppend(ctx, adds); err != nil {
		return nil, nil, err
	}
	byStream := map[string][]int{}
	var names []string
	for i, a := range adds {
		if _, seen := byStream[a.Stream]; !seen {
			names = append(names, a.Stream)
		}
		byStream[a.Stream] = append(byStream[a.Stream], i)
	}
	slices.Sort(names) // one lock order for every transaction: no deadlock between two of these
	res = make([]AddResult, len(adds))
	now := e.nowMs()
	var touched []string
	type trimAfter struct {
		stream string
		t      Trim
	}
	var trims []trimAfter
	for _, name := range names {
		idx := byStream[name]
		r := &appendReq{ctx: ctx, adds: make([]Add, len(idx))}
		create := false
		var last *Trim
		for k, i := range idx {
			r.adds[k] = adds[i]
			r.adds[k].Trim = nil
			create = create || !adds[i].NoMkStream
			if adds[i].Trim != nil {
				last = adds[i].Trim
			}
		}
		s, err := lockOrCreate(ctx, pgxRowTx{d, tx}, pgLockStreamSQL, name, create, now)
		if err != nil {
			return nil, nil, classify(err)
		}
		if s == nil {
			for _, i := range idx {
				res[i].Nil = true
			}
			continue
		}
		rows, _ := assignIDs(s, []*appendReq{r}, now) // no trim in r: never "trim needed"
		for k, i := range idx {
			res[i] = r.res[k]
		}
		for chunk := range slices.Chunk(rows, insertChunk) {
			q, args := d.insertAndSaveSQL(chunk, s)
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				return nil, nil, classify(err)
			}
		}
		if len(rows) > 0 {
			touched = append(touched, name)
		}
		if last != nil && trimDue(s, last) {
			trims = append(trims, trimAfter{name, *last})
		}
	}
	return res, func() {
		for _, s := range touched {
			e.waiters.notify(s)
		}
		for _, t := range trims {
			// A trim is housekeeping: the entries are committed whatever it does.
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_, _ = e.XTrim(tctx, t.stream, t.t)
			cancel()
		}
	}, nil
}

// pgxRowTx is a rowTx on a pgx transaction (the dialect's placeholders rebound).
type pgxRowTx struct {
	d  *postgresDialect
	tx pgx.Tx
}

func (t pgxRowTx) queryRow(ctx context.Context, q string, args ...any) interface{ Scan(dest ...any) error } {
	return t.tx.QueryRow(ctx, t.d.rebind(q), args...)
}

func (t pgxRowTx) exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.Exec(ctx, t.d.rebind(q), args...)
	return err
}

func (pgxRowTx) isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// SameDatabase reports whether pool reaches this engine's PostgreSQL database and
// schema (its connections' search_path), the condition for AppendPgTx on its
// transactions: the same server (its start time and port), database and current
// schema. Always false on SQLite.
func (e *Engine) SameDatabase(ctx context.Context, pool interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (bool, error) {
	if e.d.driver() != DriverPostgres || pool == nil {
		return false, nil
	}
	if err := e.ensureReady(ctx); err != nil {
		return false, err
	}
	const q = `SELECT current_database() || '|' || coalesce(current_schema(), '') || '|' ||
		pg_postmaster_start_time()::text || '|' || coalesce(inet_server_port(), 0)::text`
	var theirs, ours string
	if err := pool.QueryRow(ctx, q).Scan(&theirs); err != nil {
		return false, err
	}
	if err := e.db.QueryRowContext(ctx, q).Scan(&ours); err != nil {
		return false, err
	}
	return theirs == ours, nil
}
