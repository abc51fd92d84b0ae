package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// OnDead says what a dead delivery does to the ordered deliveries of its key behind it.
type OnDead string

const (
	// OnDeadSkip: a dead delivery no longer blocks its key; the next one goes. The
	// dead one stays for inspection and resend (a resent one is delivered out of order).
	OnDeadSkip OnDead = "skip"
	// OnDeadHold: the key stays blocked until the dead delivery is resent and
	// delivered (or deleted); nothing of that key overtakes it. The default.
	OnDeadHold OnDead = "hold"
)

// Ordering makes an endpoint's deliveries of one ordering key go strictly one after
// the other, in fan-out order.
type Ordering struct {
	// Enabled turns ordering on.
	Enabled bool `json:"enabled,omitempty"`
	// Key names what orders: "subject" (the default) or the name of an extension
	// attribute. Events without a value form one key of their own ("").
	Key string `json:"key,omitempty"`
	// OnDead: hold (default) or skip.
	OnDead OnDead `json:"on_dead,omitempty"`
}

func (o Ordering) validate() error {
	if !o.Enabled && (o.Key != "" || o.OnDead != "") {
		return hub.Errorf(hub.InvalidArgument, "webhook: ordering: key and on_dead need enabled: true")
	}
	switch o.OnDead {
	case "", OnDeadSkip, OnDeadHold:
	default:
		return hub.Errorf(hub.InvalidArgument, "webhook: ordering.on_dead %q: skip or hold", o.OnDead)
	}
	if o.Key != "" && o.Key != "subject" && !validExtensionName(o.Key) {
		return hub.Errorf(hub.InvalidArgument, "webhook: ordering.key %q: subject or an extension name (a-z, 0-9, at most 20)", o.Key)
	}
	return nil
}

func validExtensionName(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Ordered delivery rests on the ledger's job ids, which grow in insertion order on both
// stores (a PostgreSQL sequence, SQLite's rowid), and on a delivery keeping its job,
// and so its id, through retries, rescues after a crash, and resends. At fan-out a
// delivery to an ordered endpoint carries its key (deliveryArgs.OrderKey). Before an
// attempt, the worker looks for an older delivery of the same endpoint and key that is
// not finished: queued, running, waiting for a retry, deferred by the breaker or the
// rate limit, or (hold) dead. If there is one, the delivery snoozes (no attempt spent)
// until about when that one is next due, and looks again. The oldest unfinished
// delivery of a key is never blocked, so a key always moves unless it is held.
//
// The guarantee, precisely: for one endpoint and one key, if the fan-out (Send) of
// event A committed before the fan-out of event B began, B's first request starts
// only after A was delivered (2xx) or, with skip, became dead. Events fanned out
// concurrently (two Sends in flight at once, on any replicas) have no order between
// them, and get one (the order of their job ids) without overtaking each other. Events
// of other keys, and other endpoints, are never held up: each key waits on its own.
// A dead delivery under hold blocks its key until it is resent (it keeps its place:
// its id) and delivered, or the endpoint is switched to skip. Deliveries fanned out
// before ordering was turned on carry no key and are not ordered.

// orderPoll bounds how long a blocked delivery sleeps before looking again: the
// predecessor may finish early (delivered on a retry, resent by an operator).
// A delivered one also wakes its successor at once (nudgeNext), so the polls matter
// only when a predecessor ends otherwise (dead under skip, resent under hold).
const (
	orderPollMin  = 50 * time.Millisecond
	orderPollBusy = 50 * time.Millisecond // the predecessor is running or queued
	orderPollMax  = 5 * time.Second       // waiting on a retry far ahead, or held
)

// orderKeyOf is the delivery's ordering key for ev at ep, "" when ep is not ordered.
// It starts with "=" so an event without a value still has a key (its own).
func orderKeyOf(ep *Endpoint, ev *cloudevent.Event) string {
	o := ep.Controls.Ordering
	if !o.Enabled {
		return ""
	}
	if o.Key == "" || o.Key == "subject" {
		return "=" + ev.Subject
	}
	v, ok := ev.Extensions[o.Key]
	if !ok {
		return "="
	}
	return "=" + fmt.Sprint(v)
}

// orderIndex indexes the ledger's delivery jobs by (endpoint, key, id) for the
// predecessor lookup; only ordered deliveries are in it.
func (t *Transport) orderIndex() ledger.Index {
	return ledger.Index{Name: "webhook_delivery_order", Table: "river_job",
		Def: `(` + t.argExpr("endpoint_id") + `, ` + t.argExpr("order_key") + `, id) WHERE kind = 'webhook_delivery' AND ` +
			t.argExpr("order_key") + ` IS NOT NULL`}
}

// argExpr reads one key of a job's args as text, in each backend's JSON syntax (the
// same expression in the index and the query, so the index serves it).
func (t *Transport) argExpr(key string) string {
	if t.l.Backend() == ledger.SQLite {
		return "json_extract(args, '$." + key + "')"
	}
	return "(args->>'" + key + "')"
}

// orderWait returns how long the delivery must wait for its predecessors, 0 when it
// is the oldest unfinished one of its key. It sleeps on the nearest unfinished
// predecessor, not the oldest: a key's waiting deliveries form a chain in which only
// the head's successor polls briefly, each of the others sleeps until about when the
// one before it is next due, and every delivered one wakes the next (nudgeNext), so a
// long key costs the database a few queries per delivery, not a poll per waiter.
func (t *Transport) orderWait(ctx context.Context, ep *Endpoint, job *river.Job[deliveryArgs], now time.Time) (time.Duration, error) {
	if job.Args.OrderKey == "" {
		return 0, nil
	}
	states := `'available', 'pending', 'running', 'retryable', 'scheduled'`
	if ep.Controls.Ordering.OnDead != OnDeadSkip {
		states += `, 'discarded', 'cancelled'`
	}
	var prev int64
	err := t.st.db.QueryRowContext(ctx, `SELECT id FROM `+t.l.Table("river_job")+`
		WHERE kind = 'webhook_delivery' AND `+t.argExpr("endpoint_id")+` = $1 AND `+t.argExpr("order_key")+` = $2
		AND id < $3 AND state IN (`+states+`) ORDER BY id DESC LIMIT 1`,
		job.Args.EndpointID, job.Args.OrderKey, job.ID).Scan(&prev)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, dbErr("ordering", err)
	}
	// Delivered by this process a moment ago, its completion not yet written by
	// River's batched completer: it is finished. Every older delivery of the key was
	// finished before it started (it made the same check), so nothing is overtaken.
	if t.delivered.has(prev) {
		return 0, nil
	}
	row, err := t.l.JobGet(ctx, prev)
	if err != nil {
		return orderPollBusy, nil //nolint:nilerr // gone since the query (finished, deleted): look again soon
	}
	switch row.State {
	case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
		return orderPollMax, nil
	case rivertype.JobStateRunning:
		return orderPollBusy, nil
	}
	if ahead := row.ScheduledAt.Sub(now); ahead > 0 {
		if row.State != rivertype.JobStateRetryable {
			// Asleep itself (a snooze: waiting on its own predecessor, the breaker or
			// the rate limit; a short one is "available" with a time ahead): it wakes
			// this one when it is delivered (nudgeNext), so only the poll bound is
			// kept, for the rarer ends (dead under skip).
			return orderPollMax, nil
		}
		// Waiting out a retry's backoff: until it is due, and a little after.
		return min(orderPollMax, ahead+orderPollMin), nil
	}
	return orderPollBusy, nil // queued: about to run
}

// nudgeNext wakes the next unfinished delivery of the job's key when it is asleep
// (snoozed waiting for this one): a key's deliveries then follow each other as fast as
// the receiver answers, not at the pace of the polls. Best effort: a successor that
// misses the nudge wakes at its poll.
func (t *Transport) nudgeNext(ctx context.Context, job *river.Job[deliveryArgs]) {
	if job.Args.OrderKey == "" {
		return
	}
	var next int64
	var state string
	err := t.st.db.QueryRowContext(ctx, `SELECT id, CAST(state AS TEXT) FROM `+t.l.Table("river_job")+`
		WHERE kind = 'webhook_delivery' AND `+t.argExpr("endpoint_id")+` = $1 AND `+t.argExpr("order_key")+` = $2
		AND id > $3 AND state IN ('available', 'pending', 'running', 'retryable', 'scheduled') ORDER BY id LIMIT 1`,
		job.Args.EndpointID, job.Args.OrderKey, job.ID).Scan(&next, &state)
	if err != nil {
		return
	}
	if state == string(rivertype.JobStateRunning) {
		// Running: most likely looking at this very delivery, which it may have seen
		// unfinished, so about to be snoozed; River's completer records the snooze a
		// moment later, when a nudge now would find nothing to wake. Nudge it once
		// more after that moment (a no-op if it is really delivering).
		time.AfterFunc(renudgeAfter, func() {
			if t.closed.Load() {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if row, err := t.l.JobGet(ctx, next); err == nil &&
				(row.State == rivertype.JobStateScheduled || row.State == rivertype.JobStateAvailable) {
				t.wake(ctx, next)
			}
		})
		return
	}
	// Asleep: scheduled, or (a short snooze) available with a time still ahead, which
	// JobRetry brings to now. A retry waiting out its backoff is retryable: left alone.
	if state != string(rivertype.JobStateScheduled) && state != string(rivertype.JobStateAvailable) {
		return
	}
	t.wake(ctx, next)
}

// renudgeAfter is how long after a nudge found its successor running it is nudged
// again: longer than River's completer takes to record a snooze under load.
const renudgeAfter = 200 * time.Millisecond

// wake brings the sleeping delivery next forward to now.
func (t *Transport) wake(ctx context.Context, next int64) {
	row, err := t.l.JobRetry(ctx, next)
	if err != nil {
		t.log.Debug("webhook: ordered successor not woken", "delivery", next, "err", err)
		return
	}
	// Available now, but River tells its producers of inserts only: without this the
	// successor would wait for the next fetch poll.
	if err := t.l.WakeQueue(ctx, row.Queue); err != nil {
		t.log.Debug("webhook: ordered successor's queue not woken", "delivery", next, "err", err)
	}
}

// recentSet is a set of job ids kept for recentFor after they were added: long enough
// for River's completer to record the jobs' completion (it flushes within a second
// under any load the ledger can take), short enough to stay small.
type recentSet struct {
	mu   sync.Mutex
	m    map[int64]time.Time
	adds int
}

const recentFor = time.Minute

func (r *recentSet) add(id int64, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[int64]time.Time{}
	}
	r.m[id] = now
	if r.adds++; r.adds%1024 == 0 {
		for k, at := range r.m {
			if now.Sub(at) > recentFor {
				delete(r.m, k)
			}
		}
	}
}

func (r *recentSet) has(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.m[id]
	return ok
}
