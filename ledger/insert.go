package ledger

import (
	"context"
	"database/sql"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/hub"
)

// Insert inserts one job in a transaction of its own.
func (l *Ledger) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	res, err := l.InsertMany(ctx, []river.InsertManyParams{{Args: args, InsertOpts: opts}})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// InsertMany inserts jobs in one transaction of their own (one round trip on
// PostgreSQL).
func (l *Ledger) InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	c, err := l.current()
	if err != nil {
		return nil, err
	}
	res, err := c.InsertMany(ctx, params)
	if err == nil && l.wake != nil {
		l.wake.wake(insertedQueues(res)) // committed by now (sqlite_wake.go)
	}
	return res, err
}

// InsertTx inserts one job in the caller's transaction: a pgx.Tx or *sql.Tx (see the
// package doc for which fits which backend).
func (l *Ledger) InsertTx(ctx context.Context, tx any, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	res, err := l.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: args, InsertOpts: opts}})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// InsertManyTx inserts jobs in the caller's transaction: they become visible, and are
// worked, only if it commits (O4).
func (l *Ledger) InsertManyTx(ctx context.Context, tx any, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	return onTx(l, tx,
		func(c *river.Client[pgx.Tx], tx pgx.Tx) ([]*rivertype.JobInsertResult, error) {
			return c.InsertManyTx(ctx, tx, params)
		},
		func(c *river.Client[*sql.Tx], tx *sql.Tx) ([]*rivertype.JobInsertResult, error) {
			res, err := c.InsertManyTx(ctx, tx, params)
			if err == nil && l.wake != nil {
				l.wakeAfterCommit(tx, insertedQueues(res))
			}
			return res, err
		})
}

// onTx runs pg or sq with the client for tx's type (a pgx.Tx or *sql.Tx), refusing a
// transaction of another type, a nil one, or a pgx.Tx on SQLite.
func onTx[T any](l *Ledger, tx any, pg func(*river.Client[pgx.Tx], pgx.Tx) (T, error), sq func(*river.Client[*sql.Tx], *sql.Tx) (T, error)) (T, error) {
	var zero T
	pgc, sqlc, err := l.txClients()
	if err != nil {
		return zero, err
	}
	switch tx := tx.(type) {
	case pgx.Tx:
		if pgc == nil {
			return zero, hub.Errorf(hub.InvalidArgument, "ledger: a pgx.Tx on the %s backend: use a *sql.Tx from DB()", l.backend)
		}
		return pg(pgc, tx)
	case *sql.Tx:
		if tx == nil {
			return zero, hub.Errorf(hub.InvalidArgument, "ledger: nil *sql.Tx")
		}
		return sq(sqlc, tx)
	case nil:
		return zero, hub.Errorf(hub.InvalidArgument, "ledger: nil transaction")
	default:
		return zero, hub.Errorf(hub.InvalidArgument, "ledger: transaction of type %T: want pgx.Tx or *sql.Tx", tx)
	}
}

// txClients picks the clients for each transaction type: the working client where its
// type matches, else the insert-only ones.
func (l *Ledger) txClients() (*river.Client[pgx.Tx], *river.Client[*sql.Tx], error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, nil, hub.Errorf(hub.FailedPrecondition, "ledger: closed")
	}
	pgc, sqlc := l.pgInsert, l.sqlInsert
	if w := l.work; w != nil && w.pg != nil {
		pgc = w.pg
	}
	if w := l.work; w != nil && w.sql != nil {
		sqlc = w.sql
	}
	return pgc, sqlc, nil
}

// wakeAfterCommit wakes the working client's producers of queues once tx commits, when
// tx is InTx's (sqlite_wake.go); otherwise River's notification row does it at its
// next poll. Nothing when tx rolls back.
func (l *Ledger) wakeAfterCommit(tx *sql.Tx, queues []string) {
	if len(queues) > 0 {
		l.AfterCommit(tx, func() { l.wake.wake(queues) })
	}
}

// insertedQueues lists the queues res put new jobs into, once each.
func insertedQueues(res []*rivertype.JobInsertResult) []string {
	var queues []string
	for _, r := range res {
		if r == nil || r.Job == nil || r.UniqueSkippedAsDuplicate || slices.Contains(queues, r.Job.Queue) {
			continue
		}
		queues = append(queues, r.Job.Queue)
	}
	return queues
}

// InsertManyFastTx inserts jobs in the caller's transaction like InsertManyTx but
// returns only how many: River's InsertManyFastTx, which neither returns nor decodes
// the rows (COPY FROM on PostgreSQL; on SQLite no RETURNING and no per-job nonce in
// the metadata). It does not support River's unique jobs. For callers that need no job
// ids: the webhook transport's deliveries, whose uniqueness is keyed outside River.
func (l *Ledger) InsertManyFastTx(ctx context.Context, tx any, params []river.InsertManyParams) (int, error) {
	return onTx(l, tx,
		func(c *river.Client[pgx.Tx], tx pgx.Tx) (int, error) {
			return c.InsertManyFastTx(ctx, tx, params)
		},
		func(c *river.Client[*sql.Tx], tx *sql.Tx) (int, error) {
			n, err := c.InsertManyFastTx(ctx, tx, params)
			if err == nil && n > 0 && l.wake != nil {
				l.wakeAfterCommit(tx, paramQueues(params))
			}
			return n, err
		})
}

// paramQueues lists the queues params insert into, once each, resolved as River
// resolves them: the params' InsertOpts, then the args' own, then the default queue.
func paramQueues(params []river.InsertManyParams) []string {
	var queues []string
	for _, p := range params {
		q := ""
		if p.InsertOpts != nil {
			q = p.InsertOpts.Queue
		}
		if a, ok := p.Args.(river.JobArgsWithInsertOpts); ok && q == "" {
			q = a.InsertOpts().Queue
		}
		if q == "" {
			q = river.QueueDefault
		}
		if !slices.Contains(queues, q) {
			queues = append(queues, q)
		}
	}
	return queues
}
