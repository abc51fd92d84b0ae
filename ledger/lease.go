package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// The lease sweep (O2). River's rescuer does the same work but only every 30 s, only
// on the elected leader, and its interval is not configurable; with it alone a dead
// relay's rows could wait RescueStuckJobsAfter + 30 s + a leader election. This sweep
// runs in every started Ledger every RescueInterval through River's own driver
// queries. JobRescueMany only touches rows still `running` with attempted_at before the
// horizon, so concurrent sweeps (and River's rescuer) never undo each other's work.
//
// Unlike River's rescuer it makes a rescued job available at once instead of
// scheduling it by the retry policy: the lease itself was the wait. A worker kind
// whose own Timeout exceeds RescueStuckJobsAfter is not supported (it would be
// rescued while running); the hub's workers use the client JobTimeout.
//
// Since presence (presence.go) takes over the jobs of dead workers within seconds, the
// lease is the fallback for what presence cannot prove: a hung job in a live process,
// jobs of workers without a presence.

const sweepBatch = 1000

// sweep rescues every job running longer than the lease and returns how many.
func (l *Ledger) sweep(ctx context.Context) (int, error) {
	horizon := time.Now().UTC().Add(-l.cfg.RescueStuckJobsAfter)
	var afterID int64
	total := 0
	for {
		jobs, err := l.exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{
			AfterID: afterID, Max: sweepBatch, Schema: l.cfg.Schema, StuckHorizon: horizon,
		})
		if err != nil {
			return total, fmt.Errorf("get stuck jobs: %w", err)
		}
		if len(jobs) == 0 {
			return total, nil
		}
		now := time.Now().UTC()
		p := &riverdriver.JobRescueManyParams{Schema: l.cfg.Schema, StuckHorizon: horizon}
		for _, job := range jobs {
			afterID = job.ID
			errData, err := json.Marshal(rivertype.AttemptError{
				At: now, Attempt: max(job.Attempt, 0),
				Error: fmt.Sprintf("lease of %s expired: worker %v presumed dead", l.cfg.RescueStuckJobsAfter, job.AttemptedBy),
			})
			if err != nil {
				return total, err
			}
			state, finalized := rivertype.JobStateAvailable, (*time.Time)(nil)
			if job.Attempt >= job.MaxAttempts {
				state, finalized = rivertype.JobStateDiscarded, &now
			}
			var meta struct {
				CancelAttemptedAt time.Time `json:"cancel_attempted_at"`
			}
			if json.Unmarshal(job.Metadata, &meta) == nil && !meta.CancelAttemptedAt.IsZero() {
				state, finalized = rivertype.JobStateCancelled, &now
			}
			p.ID = append(p.ID, job.ID)
			p.Error = append(p.Error, errData)
			p.FinalizedAt = append(p.FinalizedAt, finalized)
			p.ScheduledAt = append(p.ScheduledAt, now)
			p.State = append(p.State, string(state))
		}
		if _, err := l.exec.JobRescueMany(ctx, p); err != nil {
			return total, fmt.Errorf("rescue stuck jobs: %w", err)
		}
		total += len(jobs)
		if len(jobs) < sweepBatch {
			return total, nil
		}
	}
}
