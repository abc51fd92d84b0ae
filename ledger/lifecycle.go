package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/koder/eventhub/hub"
)

// Start builds the working River client with the registered workers and queues and
// starts it, plus the lease sweep. Without queues it does nothing (insert-only).
// Start after Stop starts again.
func (l *Ledger) Start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return hub.Errorf(hub.FailedPrecondition, "ledger: Start after Close")
	}
	if l.run != nil || len(l.queues) == 0 {
		return nil
	}
	var c client
	switch {
	case l.pgRun != nil:
		c = l.pgRun
	case l.sqlRun != nil:
		c = l.sqlRun
	case l.backend == Postgres:
		rc, err := river.NewClient(riverpgxv5.New(l.pool), l.runConfig())
		if err != nil {
			return hub.Wrap(hub.InvalidArgument, err)
		}
		l.pgRun, c = rc, rc
	default:
		rc, err := river.NewClient(riversqlite.New(l.db), l.runConfig())
		if err != nil {
			return hub.Wrap(hub.InvalidArgument, err)
		}
		l.sqlRun, c = rc, rc
	}
	// River's job contexts inherit from the Start context; a detached one keeps the
	// client's life tied to Stop rather than to a caller's request context.
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		return hub.Wrap(hub.Unavailable, err)
	}
	l.run = c
	sweepCtx, cancel := context.WithCancel(context.Background())
	l.sweepStop, l.sweepDone = cancel, make(chan struct{})
	go l.sweepLoop(sweepCtx, l.sweepDone)
	return nil
}

// Stop stops fetching and waits for running jobs up to ctx's deadline; past it, running
// jobs are cancelled (their rows stay running until the lease frees them, or are
// retried by River). Stop is idempotent and safe before Start.
func (l *Ledger) Stop(ctx context.Context) error {
	l.mu.Lock()
	c, stop, done := l.run, l.sweepStop, l.sweepDone
	l.run, l.sweepStop = nil, nil
	l.mu.Unlock()
	if c == nil {
		return nil
	}
	stop()
	<-done
	err := c.Stop(ctx)
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		hard, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if herr := c.StopAndCancel(hard); herr != nil {
			return fmt.Errorf("ledger: stop: %w (then: %v)", err, herr)
		}
		return fmt.Errorf("ledger: stop: running jobs cancelled: %w", err)
	}
	return err
}

// Close stops the ledger (waiting up to JobTimeout, at least 25 s, plus 5 s for running jobs: a
// job may run for JobTimeout and then needs to record its result) and closes the
// database. It is idempotent; every call after the first returns nil.
func (l *Ledger) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), max(l.cfg.JobTimeout, 25*time.Second)+5*time.Second)
	defer cancel()
	err := l.Stop(ctx)
	return errors.Join(err, l.closeDB())
}

func (l *Ledger) closeDB() error {
	var err error
	if l.db != nil {
		err = l.db.Close()
	}
	if l.pool != nil {
		l.pool.Close()
	}
	return err
}
