package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/koder/eventhub/hub"
)

// incarnation is one working River client under one worker id, with the presence held
// for that id. A Ledger has at most one at a time; it starts one at Start and, after
// fencing itself (presence lost), another under a new id.
type incarnation struct {
	id      string
	c       client
	pg      *river.Client[pgx.Tx]  // PostgreSQL
	sql     *river.Client[*sql.Tx] // SQLite
	pres    presence               // nil without presence
	retired chan struct{}          // closed by release
	once    sync.Once
}

func (w *incarnation) release() {
	w.once.Do(func() { close(w.retired) })
	if w.pres != nil {
		w.pres.release()
	}
}

// watchPresence fences the Ledger as soon as w's presence is lost. It runs apart from
// the maintenance loop, whose sweeps may be slow against a struggling database: the
// fence has PresenceGrace/2 to complete.
func (l *Ledger) watchPresence(w *incarnation) {
	if w.pres == nil || w.pres.lost() == nil {
		return
	}
	l.fencing.Add(1)
	go func() {
		defer l.fencing.Done()
		select {
		case <-w.pres.lost():
			l.fence(w)
		case <-w.retired:
		}
	}()
}

// Start builds the working River client with the registered workers and queues and
// starts it, with the presence of its worker id (presence.go) and the maintenance loop
// (lease and presence sweeps, fencing). Without queues it does nothing (insert-only).
// Start after Stop starts again, under a new worker id.
func (l *Ledger) Start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return hub.Errorf(hub.FailedPrecondition, "ledger: Start after Close")
	}
	if l.started || len(l.queues) == 0 {
		return nil
	}
	w, err := l.incarnate(ctx, maps.Clone(l.queues))
	if err != nil {
		return err
	}
	l.work, l.started = w, true
	l.watchPresence(w)
	loopCtx, cancel := context.WithCancel(context.Background())
	l.loopStop, l.loopDone = cancel, make(chan struct{})
	go l.maintain(loopCtx, l.loopDone)
	return nil
}

// incarnate takes a new worker id, holds its presence and starts a River client under
// it working queues.
func (l *Ledger) incarnate(ctx context.Context, queues map[string]river.QueueConfig) (*incarnation, error) {
	w := &incarnation{retired: make(chan struct{})}
	if l.presence != nil {
		w.id = newWorkerID()
		var err error
		if w.pres, err = l.presence.hold(ctx, w.id); err != nil {
			return nil, err
		}
	}
	cfg := l.runConfig(w.id, queues)
	var err error
	if l.backend == Postgres {
		w.pg, err = river.NewClient(riverpgxv5.New(l.pool), cfg)
		w.c = w.pg
	} else {
		w.sql, err = river.NewClient[*sql.Tx](l.wake, cfg)
		w.c = w.sql
	}
	if err != nil {
		w.release()
		return nil, hub.Wrap(hub.InvalidArgument, err)
	}
	if w.id == "" { // no presence: River's own id
		if w.pg != nil {
			w.id = w.pg.ID()
		} else {
			w.id = w.sql.ID()
		}
	}
	// River's job contexts inherit from the Start context; a detached one keeps the
	// client's life tied to Stop rather than to a caller's request context.
	if err := w.c.Start(context.WithoutCancel(ctx)); err != nil {
		w.release()
		return nil, hub.Wrap(hub.Unavailable, err)
	}
	return w, nil
}

// maintain runs the lease sweep every RescueInterval and, with presence, the presence
// sweep every PresenceInterval (once at once, so a restarted process takes its dead
// predecessor's jobs without waiting a period); after a fence it starts a new
// incarnation at the next presence period.
func (l *Ledger) maintain(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	lease := time.NewTicker(l.cfg.RescueInterval)
	defer lease.Stop()
	retention := time.NewTicker(retentionInterval)
	defer retention.Stop()
	var presenceTick <-chan time.Time
	st := &presenceState{goneSince: map[string]time.Time{}}
	if l.presence != nil {
		t := time.NewTicker(l.cfg.PresenceInterval)
		defer t.Stop()
		presenceTick = t.C
		l.runPresenceSweep(ctx, st)
		l.collectPresence(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-lease.C:
			n, err := l.sweep(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				l.cfg.Logger.WarnContext(ctx, "ledger: lease sweep failed", slog.String("error", err.Error()))
			case n > 0:
				l.cfg.Logger.InfoContext(ctx, "ledger: rescued jobs past their lease", slog.Int("jobs", n))
			}
		case <-retention.C:
			l.runRetention(ctx)
		case <-presenceTick:
			l.rejoin(ctx)
			l.runPresenceSweep(ctx, st)
		}
	}
}

// presenceSweepTimeout bounds one presence sweep, so a hung database cannot stall the
// loop that rejoins after a fence.
func (l *Ledger) presenceSweepTimeout() time.Duration {
	return max(10*l.cfg.PresenceInterval, 10*time.Second)
}

func (l *Ledger) runPresenceSweep(ctx context.Context, st *presenceState) {
	sctx, cancel := context.WithTimeout(ctx, l.presenceSweepTimeout())
	defer cancel()
	if _, err := l.presenceSweep(sctx, st); err != nil && ctx.Err() == nil {
		l.cfg.Logger.WarnContext(ctx, "ledger: presence sweep failed", slog.String("error", err.Error()))
	}
}

// collectPresence drops what dead workers without running jobs left behind.
func (l *Ledger) collectPresence(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, l.presenceSweepTimeout())
	defer cancel()
	holders, err := l.runningHolders(ctx)
	if err != nil {
		return
	}
	keep := map[string]bool{l.WorkerID(): true}
	for _, h := range holders {
		keep[h] = true
	}
	l.presence.collect(keep)
}

// fence stops w at once: its presence is lost, so in PresenceGrace others may take its
// jobs. River's StopAndCancel stops fetching and cancels the running jobs, given
// PresenceGrace/2 (the other half went to noticing the loss). Nothing to do when w is
// no longer the Ledger's incarnation (Stop took it).
func (l *Ledger) fence(w *incarnation) {
	l.mu.Lock()
	if l.work != w {
		l.mu.Unlock()
		return
	}
	l.work = nil
	onFence := slices.Clone(l.onFence)
	l.mu.Unlock()
	l.cfg.Logger.Warn("ledger: presence lost; stopping and cancelling running jobs, then rejoining under a new worker id",
		slog.String("worker", w.id))
	for _, fn := range onFence {
		fn(w.id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.PresenceGrace/2)
	defer cancel()
	if err := w.c.StopAndCancel(ctx); err != nil {
		l.cfg.Logger.Error("ledger: fenced worker did not stop in time; its jobs may run twice",
			slog.String("worker", w.id), slog.String("error", err.Error()))
	}
	w.release()
}

// rejoin starts a new incarnation when the Ledger is started but fenced.
func (l *Ledger) rejoin(ctx context.Context) {
	l.mu.Lock()
	if !l.started || l.work != nil {
		l.mu.Unlock()
		return
	}
	queues := maps.Clone(l.queues)
	l.mu.Unlock()
	ictx, cancel := context.WithTimeout(ctx, max(l.cfg.PresenceGrace, 5*time.Second))
	defer cancel()
	w, err := l.incarnate(ictx, queues)
	if err != nil {
		if ctx.Err() == nil {
			l.cfg.Logger.Warn("ledger: rejoin failed; retrying", slog.String("error", err.Error()))
		}
		return
	}
	l.mu.Lock()
	if !l.started || l.work != nil {
		l.mu.Unlock()
		if err := l.stopIncarnation(context.Background(), w); err != nil {
			l.cfg.Logger.Warn("ledger: stopping a client started during shutdown", slog.String("error", err.Error()))
		}
		return
	}
	for name, q := range l.queues { // added while the new client was starting
		if _, ok := queues[name]; !ok {
			_ = w.c.Queues().Add(name, q)
		}
	}
	l.work = w
	l.watchPresence(w)
	l.mu.Unlock()
	l.cfg.Logger.Info("ledger: working again", slog.String("worker", w.id))
}

// Stop stops fetching and waits for running jobs up to ctx's deadline; past it, running
// jobs are cancelled (their rows stay running until presence or the lease frees them,
// or are retried by River). Then it gives up the presence, so the jobs it could not
// finish are taken over at once. Stop is idempotent and safe before Start.
func (l *Ledger) Stop(ctx context.Context) error {
	l.mu.Lock()
	if !l.started {
		l.mu.Unlock()
		return nil
	}
	l.started = false
	stop, done := l.loopStop, l.loopDone
	onStop := slices.Clone(l.onStop)
	l.mu.Unlock()
	for _, fn := range onStop {
		fn()
	}
	stop()
	<-done // no rejoin runs past here
	l.mu.Lock()
	w := l.work
	l.work = nil
	l.mu.Unlock()
	var err error
	if w != nil {
		err = l.stopIncarnation(ctx, w)
	}
	l.fencing.Wait() // a fence that took the incarnation first has finished
	return err
}

// OnStop registers fn to run at the start of every Stop (and so of Close), before
// River's client stops and the worker id's presence is given up: work this process
// holds outside River's producers (claimed jobs, claimed.go) finishes or is given back
// there, while no other process may take it over yet.
func (l *Ledger) OnStop(fn func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onStop = append(l.onStop, fn)
}

// OnFence registers fn to run when the Ledger loses the presence of worker id (fenced:
// others may take its running jobs after PresenceGrace), as River's own running jobs
// are cancelled: work this process holds under id outside River's producers (claimed
// jobs, claimed.go) must stop too, or it could run beside the process that takes it
// over. fn must not block.
func (l *Ledger) OnFence(fn func(workerID string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onFence = append(l.onFence, fn)
}

func (l *Ledger) stopIncarnation(ctx context.Context, w *incarnation) error {
	defer l.retire(w)
	err := w.c.Stop(ctx)
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		hard, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if herr := w.c.StopAndCancel(hard); herr != nil {
			return fmt.Errorf("ledger: stop: %w (then: %w)", err, herr)
		}
		return fmt.Errorf("ledger: stop: running jobs cancelled: %w", err)
	}
	return err
}

// retire gives a stopped incarnation's presence up and, unless it left running jobs
// for the others to take over, drops what is left of it.
func (l *Ledger) retire(w *incarnation) {
	w.release()
	if w.pres == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	holders, err := l.runningHolders(ctx)
	if err != nil || slices.Contains(holders, w.id) {
		return
	}
	l.presence.forget([]string{w.id})
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
	l.cancelBuilds() // a build cut short leaves an invalid index, built again at the next start
	err := l.Stop(ctx)
	l.builds.Wait()
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
