package ledger

import (
	"context"
	"errors"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/hub"
)

// Job management: thin wrappers over River's client that hide its transaction type and
// map River's not-found error to hub.NotFound.

// JobGet returns one job.
func (l *Ledger) JobGet(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return do(l, ctx, func(c client) (*rivertype.JobRow, error) { return c.JobGet(ctx, id) })
}

// JobList lists jobs (river.NewJobListParams().Kinds(...).States(...)...).
func (l *Ledger) JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error) {
	return do(l, ctx, func(c client) (*river.JobListResult, error) { return c.JobList(ctx, params) })
}

// JobRetry makes a job available at once: the manual resend of a discarded or
// cancelled job (max_attempts is raised when exhausted). A running job is untouched.
func (l *Ledger) JobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return do(l, ctx, func(c client) (*rivertype.JobRow, error) { return c.JobRetry(ctx, id) })
}

// JobCancel cancels a job; a running one is cancelled when its worker next checks.
func (l *Ledger) JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return do(l, ctx, func(c client) (*rivertype.JobRow, error) { return c.JobCancel(ctx, id) })
}

// JobDelete deletes a job that is not running.
func (l *Ledger) JobDelete(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return do(l, ctx, func(c client) (*rivertype.JobRow, error) { return c.JobDelete(ctx, id) })
}

// JobDeleteMany deletes the jobs matching params (never running ones).
func (l *Ledger) JobDeleteMany(ctx context.Context, params *river.JobDeleteManyParams) (*river.JobDeleteManyResult, error) {
	return do(l, ctx, func(c client) (*river.JobDeleteManyResult, error) { return c.JobDeleteMany(ctx, params) })
}

func do[T any](l *Ledger, _ context.Context, f func(client) (T, error)) (T, error) {
	var zero T
	c, err := l.current()
	if err != nil {
		return zero, err
	}
	v, err := f(c)
	if errors.Is(err, rivertype.ErrNotFound) {
		return zero, hub.Errorf(hub.NotFound, "ledger: %w", err)
	}
	return v, err
}
