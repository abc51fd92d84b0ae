package ledger

import (
	"context"
	"errors"
	"fmt"
)

// InTx runs f in a transaction of the ledger's database and commits it when f returns
// nil; an error of f rolls it back and is returned as is. The transaction is of the
// type InsertManyTx takes on this backend: a pgx.Tx on PostgreSQL, a *sql.Tx on SQLite
// (where it holds the only connection: f must do all its database work through tx).
func (l *Ledger) InTx(ctx context.Context, f func(tx any) error) error {
	if l.backend == Postgres {
		tx, err := l.pool.Begin(ctx)
		if err != nil {
			return txErr("begin", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		if err := f(tx); err != nil {
			return err
		}
		return txErr("commit", tx.Commit(ctx))
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return txErr("begin", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := f(tx); err != nil {
		return err
	}
	return txErr("commit", tx.Commit())
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
