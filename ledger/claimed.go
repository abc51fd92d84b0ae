package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/hub"
)

// Claimed jobs: a job inserted already running, its first attempt held by the inserting
// process, which works it in process right after the transaction commits and reports
// the outcome with Finish, instead of River's producer fetching it.
//
// A job River's producer works costs, besides its insert, a fetch (an UPDATE ... FOR
// UPDATE SKIP LOCKED over the queue's index, the rows decoded back into the process)
// and a wait for the next fetch. The process that inserts a job already has all of it:
// inserting it as River's fetch would leave it (state running, attempt 1, attempted_at
// now, attempted_by this worker id) skips both, and everything after it is River's:
// the outcome is written by River's own JobSetStateIfRunning, translated from the
// worker's error exactly as River's executor translates it (Finish), and a job whose
// process dies before finishing it is a running job of a dead worker, taken over by the
// presence sweep or, without presence, when its lease (RescueStuckJobsAfter) runs out,
// as a job fetched by a worker that died is (rescue.go). So a claimed job is never lost
// and never worked twice while its holder lives; the holder must finish or release it
// within the lease.
//
// PostgreSQL only for now (ErrNoClaim on SQLite): the embedded default's single
// connection makes River's fetch cheap there, and its batched completion
// (sqlite_complete.go) already takes the completion's cost.

// ErrNoClaim is InsertClaimedTx's answer when the ledger cannot claim jobs now: not
// working (before Start, after Stop, while fenced), on SQLite, or in a transaction of
// another type. Nothing was written; insert the jobs the ordinary way.
var ErrNoClaim = errors.New("ledger: cannot claim jobs here")

// InsertClaimedTx inserts params in tx (a pgx.Tx of InTx) as jobs already running under
// this ledger's worker id, and returns them in params' order. The caller works them
// after tx commits (AfterCommit) and reports each outcome with Finish within
// RescueStuckJobsAfter of the insert; a job it will not work after all it gives back to
// River's producers, attempt unspent, by finishing it with a zero JobSnoozeError.
// It refuses (ErrNoClaim) where claiming is not possible; see the package comment above.
func (l *Ledger) InsertClaimedTx(ctx context.Context, tx any, params []river.InsertManyParams) ([]*rivertype.JobRow, error) {
	ptx, ok := tx.(pgx.Tx)
	if !ok || l.backend != Postgres {
		return nil, ErrNoClaim
	}
	worker := l.claimWorker()
	if worker == "" {
		return nil, ErrNoClaim
	}
	n := len(params)
	var (
		args   = make([][]byte, n)
		kinds  = make([]string, n)
		maxAtt = make([]int16, n)
		queues = make([]string, n)
		tags   = make([]string, n)
		tagv   = make([][]string, n)
	)
	for i, p := range params {
		b, err := json.Marshal(p.Args)
		if err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "ledger: encode job args: %v", err)
		}
		args[i], kinds[i] = b, p.Args.Kind()
		queues[i], maxAtt[i] = river.QueueDefault, int16(river.MaxAttemptsDefault)
		if o := p.InsertOpts; o != nil {
			if o.Queue != "" {
				queues[i] = o.Queue
			}
			if o.MaxAttempts > 0 {
				maxAtt[i] = int16(min(o.MaxAttempts, 1<<15-1)) //nolint:gosec // bounded above
			}
			for _, t := range o.Tags {
				if strings.Contains(t, ",") {
					return nil, hub.Errorf(hub.InvalidArgument, "ledger: job tag %q contains a comma", t)
				}
			}
			tags[i], tagv[i] = strings.Join(o.Tags, ","), o.Tags
		}
	}
	now := Truncate(time.Now())
	// One statement whatever the batch (no COPY: its three round trips cost more than
	// the rows for the small batches of an ingress). The RETURNING order is the
	// SELECT's, as River's own batch insert relies on.
	rows, err := ptx.Query(ctx, `INSERT INTO `+l.Table("river_job")+` (args, attempt, attempted_at, attempted_by,
			created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
		SELECT a, 1, $1, ARRAY[$2::text], $1, k, m, '{}', 1, q, $1, 'running',
			CASE WHEN t = '' THEN '{}'::varchar(255)[] ELSE string_to_array(t, ',')::varchar(255)[] END
		FROM unnest($3::jsonb[], $4::text[], $5::smallint[], $6::text[], $7::text[]) AS u(a, k, m, q, t)
		RETURNING id`, now, worker, args, kinds, maxAtt, queues, tags)
	if err != nil {
		return nil, err
	}
	out := make([]*rivertype.JobRow, 0, n)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		i := len(out)
		at := now
		out = append(out, &rivertype.JobRow{
			ID: id, Attempt: 1, AttemptedAt: &at, AttemptedBy: []string{worker}, CreatedAt: now,
			EncodedArgs: args[i], Kind: kinds[i], MaxAttempts: int(maxAtt[i]), Metadata: []byte("{}"),
			Priority: 1, Queue: queues[i], ScheduledAt: now, State: rivertype.JobStateRunning,
			Tags: tagv[i],
		})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) != n {
		return nil, hub.Errorf(hub.Internal, "ledger: inserted %d claimed jobs of %d", len(out), n)
	}
	return out, nil
}

// claimWorker is the worker id claimed jobs are inserted under: "" when not working,
// and from the moment Stop begins (its OnStop callbacks drain what was claimed).
func (l *Ledger) claimWorker() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started || l.work == nil {
		return ""
	}
	return l.work.id
}

// Outcome is how a claimed job's attempt ended, in River's terms: Err is what the
// worker's Work returned (nil, river.JobSnooze, river.JobCancel or any other error),
// Meta the metadata it set (river.MetadataSet's map), Started when the attempt began
// and NextRetry the worker's NextRetry, called for a retryable error only.
type Outcome struct {
	Job       *rivertype.JobRow
	Err       error
	Meta      map[string]any
	Started   time.Time
	NextRetry func() time.Time
}

// schedulerInterval is River's default SchedulerInterval (the ledger does not change
// it): a retry or snooze due sooner is made available at once, as River's executor does.
const schedulerInterval = 5 * time.Second

// Finish records the outcomes of claimed jobs, each as River's executor records a
// worked job's (JobSetStateIfRunning: completed; snoozed with the attempt given back;
// cancelled; discarded after the last attempt; retryable at NextRetry with the
// attempt's error appended). A job no longer running (rescued, cancelled by an
// operator) gets only the attempt's metadata, as River's statement does; a job running
// under another holder (taken over and fetched again while this process still worked
// it) is left to that holder untouched.
func (l *Ledger) Finish(ctx context.Context, outs []Outcome) error {
	if len(outs) == 0 {
		return nil
	}
	now := time.Now()
	var (
		rest    []*riverdriver.JobSetStateIfRunningParams
		restBy  []string
		ids     []int64
		holders []string
		patches [][]byte
		done    = map[int64]*riverdriver.JobSetStateIfRunningParams{}
	)
	for _, o := range outs {
		s, err := setState(o, now)
		if err != nil {
			return err
		}
		if s.State != rivertype.JobStateCompleted {
			rest, restBy = append(rest, s), append(restBy, Holder(o.Job))
			continue
		}
		done[s.ID] = s
		ids, holders, patches = append(ids, s.ID), append(holders, Holder(o.Job)), append(patches, s.MetadataUpdates)
	}
	if len(done) > 0 {
		left, err := l.completeRunning(ctx, ids, holders, patches, now)
		if err != nil {
			return err
		}
		for i, id := range ids {
			if left[id] { // not running under its holder: the guarded statement sorts it out
				rest, restBy = append(rest, done[id]), append(restBy, holders[i])
			}
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return l.setStateHeld(ctx, rest, restBy, now)
}

// setStateHeld writes states with River's JobSetStateIfRunningMany, minus those of jobs
// running under another holder than holders[i]: it locks the running ones first, in the
// same transaction, so none is taken over between the check and the write. River's
// statement checks only that a job is running, which a job fetched again by another
// worker also is; overwriting that would discard or retry a delivery its new holder is
// making.
func (l *Ledger) setStateHeld(ctx context.Context, states []*riverdriver.JobSetStateIfRunningParams, holders []string, now time.Time) error {
	ids := make([]int64, len(states))
	for i, s := range states {
		ids[i] = s.ID
	}
	return pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT j.id, j.attempted_by[array_upper(j.attempted_by, 1)] IS DISTINCT FROM u.holder
			FROM `+l.Table("river_job")+` AS j JOIN unnest($1::bigint[], $2::text[]) AS u(id, holder) ON j.id = u.id
			WHERE j.state = 'running' ORDER BY j.id FOR UPDATE OF j`, ids, holders)
		if err != nil {
			return err
		}
		skip := make(map[int64]bool)
		var (
			id    int64
			other bool
		)
		if _, err := pgx.ForEachRow(rows, []any{&id, &other}, func() error {
			skip[id] = other
			return nil
		}); err != nil {
			return err
		}
		p := &riverdriver.JobSetStateIfRunningManyParams{Now: &now, Schema: l.cfg.Schema}
		for _, s := range states {
			if skip[s.ID] {
				continue
			}
			p.ID = append(p.ID, s.ID)
			p.Attempt = append(p.Attempt, s.Attempt)
			p.ErrData = append(p.ErrData, s.ErrData)
			p.FinalizedAt = append(p.FinalizedAt, s.FinalizedAt)
			p.MetadataDoMerge = append(p.MetadataDoMerge, s.MetadataDoMerge)
			p.MetadataUpdates = append(p.MetadataUpdates, s.MetadataUpdates)
			p.ScheduledAt = append(p.ScheduledAt, s.ScheduledAt)
			p.State = append(p.State, s.State)
		}
		if len(p.ID) == 0 {
			return nil
		}
		_, err = riverpgxv5.New(nil).UnwrapExecutor(tx).JobSetStateIfRunningMany(ctx, p)
		return err
	})
}

// completeRunning completes the jobs of ids still running under their holders (each
// merging its metadata patch, nil for none) in one UPDATE and returns the ids it did not
// find so. A job taken over meanwhile (its holder fenced, its lease ended) and fetched
// again runs under another holder: it is left to that one.
//
// It is River's JobSetStateIfRunning for state completed (state, finalized_at, the
// metadata merged with ||) without the rest of River's statement: the CASE of every
// column for every other outcome, and the whole rows it sends back and the client
// decodes (a delivery's row holds its request body).
func (l *Ledger) completeRunning(ctx context.Context, ids []int64, holders []string, patches [][]byte, at time.Time) (map[int64]bool, error) {
	rows, err := l.pool.Query(ctx, `UPDATE `+l.Table("river_job")+` AS j SET state = 'completed', finalized_at = $2,
			metadata = CASE WHEN u.patch IS NULL THEN j.metadata ELSE j.metadata || u.patch END
		FROM unnest($1::bigint[], $3::jsonb[], $4::text[]) AS u(id, patch, holder)
		WHERE j.id = u.id AND j.state = 'running' AND j.attempted_by[array_upper(j.attempted_by, 1)] = u.holder
		RETURNING j.id`, ids, at, patches, holders)
	if err != nil {
		return nil, err
	}
	left := make(map[int64]bool, len(ids))
	for _, id := range ids {
		left[id] = true
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		delete(left, id)
	}
	rows.Close()
	return left, rows.Err()
}

// setState translates one outcome as River's executor does (reportResult, reportError).
func setState(o Outcome, now time.Time) (*riverdriver.JobSetStateIfRunningParams, error) {
	j := o.Job
	meta := o.Meta
	var snooze *rivertype.JobSnoozeError
	if errors.As(o.Err, &snooze) {
		if snooze.Duration > 0 { // a release (zero) is not a snooze the job asked for
			meta = withSnoozes(meta, j.Metadata)
		}
		b, err := metaJSON(meta)
		if err != nil {
			return nil, err
		}
		at := now.Add(snooze.Duration)
		if snooze.Duration <= schedulerInterval {
			return riverdriver.JobSetStateSnoozedAvailable(j.ID, at, j.Attempt-1, b), nil
		}
		return riverdriver.JobSetStateSnoozed(j.ID, at, j.Attempt-1, b), nil
	}
	b, err := metaJSON(meta)
	if err != nil {
		return nil, err
	}
	if o.Err == nil {
		return riverdriver.JobSetStateCompleted(j.ID, now, b), nil
	}
	errData, err := json.Marshal(rivertype.AttemptError{At: o.Started, Attempt: j.Attempt, Error: o.Err.Error()})
	if err != nil {
		return nil, err
	}
	var cancel *rivertype.JobCancelError
	switch {
	case errors.As(o.Err, &cancel):
		return riverdriver.JobSetStateCancelled(j.ID, now, errData, b), nil
	case j.Attempt >= j.MaxAttempts:
		return riverdriver.JobSetStateDiscarded(j.ID, now, errData, b), nil
	}
	next := now
	if o.NextRetry != nil {
		next = o.NextRetry()
	}
	if next.Sub(now) <= schedulerInterval {
		return riverdriver.JobSetStateErrorAvailable(j.ID, next, errData, b), nil
	}
	return riverdriver.JobSetStateErrorRetryable(j.ID, next, errData, b), nil
}

// Holder is the worker id a running job is held under: the last of its attempted_by, as
// River records it ("" for a job never attempted). A claimed job's holder is the
// ledger's WorkerID at the claim.
func Holder(j *rivertype.JobRow) string {
	if len(j.AttemptedBy) == 0 {
		return ""
	}
	return j.AttemptedBy[len(j.AttemptedBy)-1]
}

// withSnoozes adds River's snooze count ("snoozes", one more than metadata holds).
func withSnoozes(meta map[string]any, metadata []byte) map[string]any {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(metadata, &m)
	out := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out["snoozes"] = m.Snoozes + 1
	return out
}

func metaJSON(meta map[string]any) ([]byte, error) {
	if len(meta) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, hub.Errorf(hub.Internal, "ledger: encode job metadata: %v", err)
	}
	return b, nil
}
