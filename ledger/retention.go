package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river/riverdriver"
)

// Per-queue retention. River's job cleaner keeps every completed job for one period
// (Config.CompletedRetention), which suits webhook deliveries: they are the delivery
// history the console and the admin API list, and they keep H1's uniqueness while they
// exist. An outbox row needs no record once relayed (its destination has the event),
// and at one row per event it is most of a busy ledger: kept for the same hour it
// fills the hot table the fetch queries scan (hundreds of thousands of rows after a
// few load runs, and throughput falls as they grow). RetainCompleted gives such a
// queue a period of its own; the maintenance loop of every started Ledger deletes its
// completed jobs past it, in bounded batches, every retentionInterval.

// retentionInterval is how often the per-queue retention runs (River's cleaner runs
// every 30 s).
const retentionInterval = 30 * time.Second

// retentionBatch bounds one delete, so a large backlog never holds a long lock.
const retentionBatch = 5000

// RetainCompleted keeps the completed jobs of queue for d (at least a second), shorter
// than the ledger's CompletedRetention; the rest of the queue's jobs (dead ones) keep
// the ledger's periods. Call before Start; the last call for a queue wins.
func (l *Ledger) RetainCompleted(queue string, d time.Duration) error {
	if d < time.Second {
		return fmt.Errorf("ledger: retention of queue %q: %s is under 1s", queue, d)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.retain == nil {
		l.retain = map[string]time.Duration{}
	}
	l.retain[queue] = d
	return nil
}

// cleanRetained deletes the completed jobs of each RetainCompleted queue past its
// period and returns how many.
func (l *Ledger) cleanRetained(ctx context.Context) (int, error) {
	l.mu.Lock()
	retain := make(map[string]time.Duration, len(l.retain))
	for q, d := range l.retain {
		retain[q] = d
	}
	l.mu.Unlock()
	total := 0
	for q, d := range retain {
		for {
			n, err := l.exec.JobDeleteBefore(ctx, &riverdriver.JobDeleteBeforeParams{
				CompletedDoDelete:           true,
				CompletedFinalizedAtHorizon: time.Now().UTC().Add(-d),
				Max:                         retentionBatch,
				QueuesIncluded:              []string{q},
				Schema:                      l.cfg.Schema,
			})
			total += n
			if err != nil {
				return total, fmt.Errorf("delete completed jobs of queue %q: %w", q, err)
			}
			if n < retentionBatch || ctx.Err() != nil {
				break
			}
		}
	}
	return total, nil
}

// runRetention is one pass of the maintenance loop.
func (l *Ledger) runRetention(ctx context.Context) {
	n, err := l.cleanRetained(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		l.cfg.Logger.WarnContext(ctx, "ledger: retention failed", slog.String("error", err.Error()))
	case n > 0:
		l.cfg.Logger.DebugContext(ctx, "ledger: deleted completed jobs past their queue's retention", slog.Int("jobs", n))
	}
}
