package webhook

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/hub"
)

// Metadata keys a delivery job carries after an attempt (River merges them into the
// job row whether the attempt succeeded or not), read back by Delivery.
const (
	metaStatus   = "status"   // last HTTP status, 0 when no response
	metaResponse = "response" // first ResponseExcerpt bytes of the last failed response
	metaError    = "error"    // last error text
	metaCode     = "code"     // hub error code name of the last failure
	metaReason   = "reason"   // why a delivery ended without success (gone, blocked...)
)

// metadataInt reads the integer a job's metadata holds under key, 0 when it holds none
// (absent, null, or not a number): what a deferral recorded for the next run of the job.
func metadataInt(metadata []byte, key string) int64 {
	if len(metadata) == 0 {
		return 0
	}
	var m map[string]json.RawMessage
	var n int64
	if json.Unmarshal(metadata, &m) != nil || json.Unmarshal(m[key], &n) != nil {
		return 0
	}
	return n
}

// metaKey carries the metadata of a claimed delivery's attempt (inline.go) in its
// context, where River's executor keeps its own for the jobs it works.
type metaKey struct{}

// setMeta records key in the metadata of the job being worked: River's MetadataSet for
// a job River's producer fetched, the attempt's own map for a claimed one. Either way
// it is written with the attempt's outcome.
func setMeta(ctx context.Context, key string, value any) {
	if m, ok := ctx.Value(metaKey{}).(map[string]any); ok {
		m[key] = value
		return
	}
	_ = river.MetadataSet(ctx, key, value)
}

// worker attempts one delivery per job.
type worker struct {
	river.WorkerDefaults[deliveryArgs]
	t *Transport
}

// Timeout bounds the whole job: the request plus its database reads and writes.
func (w *worker) Timeout(*river.Job[deliveryArgs]) time.Duration {
	return w.t.cfg.jobTimeout()
}

// NextRetry is the retry schedule (H3) with the receiver's Retry-After, if any.
func (w *worker) NextRetry(job *river.Job[deliveryArgs]) time.Time {
	var hint time.Duration
	if v, ok := w.t.retryAfter.LoadAndDelete(job.ID); ok {
		hint = v.(time.Duration)
	}
	return time.Now().Add(w.t.policy.delay(job.Attempt, hint))
}

// Work gates the attempt on the endpoint and its breaker, sends, and turns the result
// into River's vocabulary: nil (delivered), an error (retry; discarded = dead after the
// last attempt), JobSnooze (deferred while the breaker is open, the rate limit or the
// in-flight cap is reached, or a predecessor is not delivered: no attempt spent) or
// JobCancel (dead at once).
func (w *worker) Work(ctx context.Context, job *river.Job[deliveryArgs]) error {
	return w.t.work(ctx, job)
}

// work is one attempt of job, by River's worker or in process for a claimed delivery
// (inline.go); its metadata goes through setMeta.
func (t *Transport) work(ctx context.Context, job *river.Job[deliveryArgs]) error {
	now := time.Now()
	ep, err := t.endpoint(ctx, job.Args.EndpointID, now)
	switch {
	case hub.Code(err) == hub.NotFound:
		return t.end(ctx, "endpoint_deleted", hub.Errorf(hub.NotFound, "webhook: endpoint %s deleted", job.Args.EndpointID))
	case err != nil:
		return err
	case !ep.Enabled:
		return t.end(ctx, "endpoint_disabled", hub.Errorf(hub.FailedPrecondition, "webhook: endpoint %s disabled: %s", ep.ID, ep.DisabledReason))
	}
	if wait, err := t.orderWait(ctx, ep, job, now); err != nil {
		return err
	} else if wait > 0 {
		t.m.deliveries.WithLabelValues("ordered_wait").Inc()
		return river.JobSnooze(wait)
	}
	release, deferFor := t.admitInflight(ctx, ep, job.Metadata)
	if release == nil {
		t.m.deliveries.WithLabelValues("inflight_deferred").Inc()
		return river.JobSnooze(deferFor)
	}
	defer release()
	wait, err := t.br.admit(ctx, ep.ID, now)
	if err != nil {
		return err
	}
	if wait > 0 {
		t.m.deliveries.WithLabelValues("deferred").Inc()
		return river.JobSnooze(wait)
	}
	if wait, err := t.admitRate(ctx, ep, job.Metadata, now); err != nil {
		return err
	} else if wait > 0 {
		t.m.deliveries.WithLabelValues("rate_limited").Inc()
		return river.JobSnooze(wait)
	}
	started := time.Now()
	r := t.attempt(ctx, ep, &job.Args, job.ID)
	t.recordAttempt(ctx, job, r, started) // attempts.go
	setMeta(ctx, metaStatus, r.status)
	if r.outcome == delivered {
		t.m.deliveries.WithLabelValues("delivered").Inc()
		if err := t.br.success(ctx, ep.ID, time.Now()); err != nil {
			// The receiver has it: failing the job now would only send it again.
			t.log.Warn("webhook: breaker update failed", "endpoint", ep.ID, "err", err)
		}
		if job.Args.OrderKey != "" {
			t.delivered.add(job.ID, time.Now())
		}
		t.nudgeNext(ctx, job)
		return nil
	}
	setMeta(ctx, metaResponse, r.excerpt)
	setMeta(ctx, metaError, r.err.Error())
	setMeta(ctx, metaCode, r.code.String())
	switch r.outcome {
	case gone:
		if err := t.st.disableEndpoint(ctx, ep.ID, "410 Gone from receiver", time.Now()); err != nil {
			return err // retried: the endpoint must end up disabled
		}
		t.forgetEndpoint(ep.ID)
		t.log.Warn("webhook: endpoint disabled by 410 Gone", "endpoint", ep.ID)
		return t.end(ctx, "gone", r.err)
	case blocked, invalid:
		t.log.Warn("webhook: delivery refused", "endpoint", ep.ID, "delivery", job.ID, "err", r.err)
		return t.end(ctx, r.outcome.String(), r.err)
	}
	if r.code != hub.Canceled { // a shutdown cancelling the request says nothing of the receiver
		if _, err := t.br.failure(ctx, ep.ID, time.Now()); err != nil {
			t.log.Warn("webhook: breaker update failed", "endpoint", ep.ID, "err", err)
		}
	}
	if job.Attempt >= job.MaxAttempts {
		setMeta(ctx, metaReason, "exhausted")
		t.m.deliveries.WithLabelValues("dead").Inc()
	} else {
		t.m.deliveries.WithLabelValues("failed").Inc()
		if r.retryAfter > 0 {
			t.retryAfter.Store(job.ID, r.retryAfter)
		}
	}
	return r.err
}

// end finishes a delivery without success and without further attempts (River
// cancelled state; shown as dead, resendable).
func (t *Transport) end(ctx context.Context, reason string, err error) error {
	setMeta(ctx, metaReason, reason)
	setMeta(ctx, metaError, err.Error())
	t.m.deliveries.WithLabelValues(reason).Inc()
	return river.JobCancel(err)
}

var _ river.Worker[deliveryArgs] = (*worker)(nil)
