package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// InTx runs f in a transaction of the ledger's database and commits it when f returns
// nil; an error of f rolls it back and is returned as is. The transaction is of the
// type InsertManyTx takes on this backend: a pgx.Tx on PostgreSQL, a *sql.Tx on SQLite
// (where it holds the only connection: f must do all its database work through tx).
// Callbacks registered with AfterCommit during f run once the commit succeeded.
func (l *Ledger) InTx(ctx context.Context, f func(tx any) error) error {
	if l.backend == Postgres {
		tx, err := l.pool.Begin(ctx)
		if err != nil {
			return txErr("begin", err)
		}
		l.hooks.open(tx)
		defer l.hooks.take(tx) // a failed f (or a panic) drops them
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		if err := f(tx); err != nil {
			return err
		}
		return l.hooks.committed(tx, txErr("commit", tx.Commit(ctx)))
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return txErr("begin", err)
	}
	l.hooks.open(tx)
	defer l.hooks.take(tx)
	defer func() { _ = tx.Rollback() }()
	if err := f(tx); err != nil {
		return err
	}
	return l.hooks.committed(tx, txErr("commit", tx.Commit()))
}

// ErrNoCommitHook is a TxSender's answer when it cannot write in the transaction it
// was given because its records need an AfterCommit callback there and the
// transaction is not one of InTx: the caller relays those events through outbox rows
// instead. Nothing was written.
var ErrNoCommitHook = errors.New("ledger: transaction without commit callbacks (not begun by InTx)")

// AfterCommit registers fn to run after tx commits, when tx is a transaction of InTx
// still open; it reports false otherwise (a caller's own transaction, whose commit the
// ledger does not see), and fn is then never called. A rollback drops fn. The
// callbacks run in registration order on InTx's goroutine, after the commit and
// before InTx returns, with the connection already released: what a record written
// in tx must trigger once it is visible (waking the readers of a stream appended to
// in tx) goes here. They must not block for long: the request waits for them.
func (l *Ledger) AfterCommit(tx any, fn func()) bool { return l.hooks.add(tx, fn) }

// commitHooks holds AfterCommit's callbacks per open InTx transaction. Keys are the
// transaction values themselves (*sql.Tx, or the pgx.Tx interface holding a pointer),
// so a transaction the ledger did not begin is never found.
type commitHooks struct {
	mu sync.Mutex
	m  map[any][]func()
}

func (h *commitHooks) open(tx any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[any][]func(){}
	}
	h.m[tx] = nil
}

func (h *commitHooks) add(tx any, fn func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	fns, ok := h.m[tx]
	if !ok {
		return false
	}
	h.m[tx] = append(fns, fn)
	return true
}

// take removes tx's callbacks and returns them.
func (h *commitHooks) take(tx any) []func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	fns := h.m[tx]
	delete(h.m, tx)
	return fns
}

// committed runs tx's callbacks when the commit succeeded (err nil) and drops them
// either way; it returns err.
func (h *commitHooks) committed(tx any, err error) error {
	fns := h.take(tx)
	if err != nil {
		return err
	}
	for _, fn := range fns {
		fn()
	}
	return nil
}

// txErr names a begin or commit failure: context errors pass unwrapped, the driver's
// error is wrapped unclassified, so each caller maps it with its own table (the
// outbox's tells a connection failure from a missing table).
func txErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return fmt.Errorf("ledger: %s: %w", op, err)
}
