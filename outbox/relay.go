package outbox

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// relay is the River worker that sends one row to its destination.
//
// Outcomes (O3):
//   - success: the job completes (River deletes it after the ledger's retention).
//   - a retryable error (hub.IsRetryable): River retries after Config.Backoff, and
//     discards the row (dead-letter) after MaxAttempts.
//   - a permanent error (InvalidArgument, NotFound, PermissionDenied, AlreadyExists...),
//     an unknown destination or an undecodable row: dead-lettered at once with the
//     reason (River's JobCancel: state cancelled, error recorded).
//
// Two codes that hub.IsRetryable calls permanent are retried here, because they
// describe the sending process, not the event: Canceled (the relay is shutting down)
// and FailedPrecondition (the transport was closed under a running relay). Dead-
// lettering them would make a restart cost an operator's manual resend.
type relay struct {
	river.WorkerDefaults[rowArgs]
	cfg    *Config
	lookup Lookup
}

func (r *relay) Work(ctx context.Context, job *river.Job[rowArgs]) error {
	t, ok := r.lookup(job.Args.Destination)
	if !ok {
		return river.JobCancel(fmt.Errorf("outbox: unknown destination %q", job.Args.Destination))
	}
	ev, err := job.Args.event()
	if err != nil {
		return river.JobCancel(fmt.Errorf("outbox: undecodable row for %q: %w", job.Args.Destination, err))
	}
	// The row was written when the event was published (inside the caller's
	// transaction): that is when the hub accepted it, however late the relay works it.
	// Transports that pick recipients at delivery time use it (webhook, H6).
	err = hub.TraceAttempt(ctx, job.Args.Destination, ev, job.Attempt, func(ctx context.Context) error {
		return t.Send(hub.WithAcceptedAt(ctx, job.CreatedAt), []*cloudevent.Event{ev})
	})
	if err == nil {
		return nil
	}
	if ctx.Err() == nil && permanent(err) {
		return river.JobCancel(fmt.Errorf("outbox: %s rejected event %s (%s): %w", job.Args.Destination, ev.ID, hub.Code(err), err))
	}
	return fmt.Errorf("outbox: send %s to %s (%s): %w", ev.ID, job.Args.Destination, hub.Code(err), err)
}

func permanent(err error) bool {
	switch hub.Code(err) {
	case hub.Canceled, hub.FailedPrecondition:
		return false
	}
	return !hub.IsRetryable(err)
}

// NextRetry is River's per-kind retry schedule: exponential backoff with jitter.
func (r *relay) NextRetry(job *river.Job[rowArgs]) time.Time {
	return time.Now().Add(r.cfg.Backoff(job.Attempt))
}

var _ river.Worker[rowArgs] = (*relay)(nil)
