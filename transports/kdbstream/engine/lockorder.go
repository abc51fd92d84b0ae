package engine

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"sort"
	"time"
)

// Lock waits on PostgreSQL. A transaction of the engine that locks several streams
// locks them in name order, but a transaction of another writer may hold them in
// another order: the ingress's transaction appends for one kdbstream transport after
// another (outbox.RowLocker, destination order), each locking its own streams. Waiting
// for a second stream while holding a first could then close a cycle with such a
// transaction, so the engine's own multi-stream transactions (the committer's batches,
// dead-lettering, the dead-letter replay) wait only for their first stream: a later one
// held elsewhere ends the attempt at once (NOWAIT), its locks are released, and it is
// tried again after a short pause, for up to lockRetryFor, then once more waiting for
// every lock (PostgreSQL's deadlock detector ends a cycle, should one form then), so a
// stream held again and again cannot starve it. SQLite's one connection serialises
// every transaction: no lock is taken there.
const (
	lockRetryFor   = 2 * time.Second
	lockRetryFirst = time.Millisecond
	lockRetryMax   = 20 * time.Millisecond
)

// inTxLocking runs fn in a transaction (inTxRaw), again while its NOWAIT locks find a
// stream held (see above); noWait tells fn which locks to take.
func (e *Engine) inTxLocking(ctx context.Context, fn func(tx *sql.Tx, noWait bool) error) error {
	retryFor := lockRetryFor
	if d := e.lockRetryFor.Load(); d > 0 { // a test's
		retryFor = time.Duration(d)
	}
	pause, deadline := lockRetryFirst, time.Now().Add(retryFor)
	for {
		noWait := e.Postgres() && time.Now().Before(deadline)
		err := e.inTxRaw(ctx, false, func(tx *sql.Tx) error { return fn(tx, noWait) })
		if !noWait || !isLockNotAvailable(err) {
			return err
		}
		e.lockRetries.Add(1)
		select {
		case <-time.After(pause/2 + rand.N(pause/2+1)):
		case <-ctx.Done():
			return ctx.Err()
		}
		pause = min(2*pause, lockRetryMax)
	}
}

// inTxLockingOpen is inTxLocking for a command: it refuses a closed engine.
func (e *Engine) inTxLockingOpen(ctx context.Context, fn func(tx *sql.Tx, noWait bool) error) error {
	if e.isClosed() {
		return errClosed
	}
	return e.inTxLocking(ctx, fn)
}

// lockStreams locks the streams of names in name order (create[n] makes a missing one)
// and returns them by name (nil for a missing one not created). With noWait every
// stream but the first is locked with NOWAIT (see above).
func (e *Engine) lockStreams(ctx context.Context, tx *sql.Tx, names []string, create map[string]bool, noWait bool) (map[string]*stream, error) {
	sort.Strings(names)
	locked := make(map[string]*stream, len(names))
	for i, n := range names {
		q := e.selectStreamQ
		if noWait && i > 0 {
			q = e.noWaitStreamQ
		}
		s, err := e.lockStreamQ(ctx, tx, q, n, create[n])
		if err != nil {
			return nil, err
		}
		locked[n] = s
	}
	return locked, nil
}
