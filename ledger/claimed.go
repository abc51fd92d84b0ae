package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
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
// Both backends claim. On SQLite River's fetch holds the one connection too: profiled
// on the embedded default under load, it was the largest single cost (about a fifth
// of the hub's CPU, each fetched row's JSON converted and decoded back).

// ErrNoClaim is InsertClaimedTx's answer when the ledger cannot claim jobs now: not
// working (before Start, after Stop, while fenced), or in a transaction of another
// type than InTx's. Nothing was written; insert the jobs the ordinary way.
var ErrNoClaim = errors.New("ledger: cannot claim jobs here")

// InsertClaimedTx inserts params in tx (InTx's: a pgx.Tx or a *sql.Tx) as jobs already
// running under this ledger's worker id, and returns them in params' order. The caller
// works them after tx commits (AfterCommit) and reports each outcome with Finish within
// RescueStuckJobsAfter of the insert; a job it will not work after all it gives back to
// River's producers, attempt unspent, by finishing it with a zero JobSnoozeError.
// It refuses (ErrNoClaim) where claiming is not possible; see the package comment above.
func (l *Ledger) InsertClaimedTx(ctx context.Context, tx any, params []river.InsertManyParams) ([]*rivertype.JobRow, error) {
	ptx, isPg := tx.(pgx.Tx)
	stx, isSQLite := tx.(*sql.Tx)
	if !(isPg && l.backend == Postgres) && !(isSQLite && l.backend == SQLite) {
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
	var ids []int64
	var err error
	if isPg {
		ids, err = l.insertClaimedPg(ctx, ptx, now, worker, args, kinds, maxAtt, queues, tags)
	} else {
		ids, err = insertClaimedSQLite(ctx, stx, now, worker, args, kinds, maxAtt, queues, tagv)
	}
	if err != nil {
		return nil, err
	}
	out := make([]*rivertype.JobRow, 0, n)
	for i, id := range ids {
		at := now
		out = append(out, &rivertype.JobRow{
			ID: id, Attempt: 1, AttemptedAt: &at, AttemptedBy: []string{worker}, CreatedAt: now,
			EncodedArgs: args[i], Kind: kinds[i], MaxAttempts: int(maxAtt[i]), Metadata: []byte("{}"),
			Priority: 1, Queue: queues[i], ScheduledAt: now, State: rivertype.JobStateRunning,
			Tags: tagv[i],
		})
	}
	if len(out) != n {
		return nil, hub.Errorf(hub.Internal, "ledger: inserted %d claimed jobs of %d", len(out), n)
	}
	return out, nil
}

// insertClaimedPg inserts claimed jobs on PostgreSQL and returns their ids in order:
// one statement whatever the batch (no COPY: its three round trips cost more than the
// rows for the small batches of an ingress). The RETURNING order is the SELECT's, as
// River's own batch insert relies on.
func (l *Ledger) insertClaimedPg(ctx context.Context, tx pgx.Tx, now time.Time, worker string, args [][]byte,
	kinds []string, maxAtt []int16, queues, tags []string) ([]int64, error) {
	rows, err := tx.Query(ctx, `INSERT INTO `+l.Table("river_job")+` (args, attempt, attempted_at, attempted_by,
			created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
		SELECT a, 1, $1, ARRAY[$2::text], $1, k, m, '{}', 1, q, $1, 'running',
			CASE WHEN t = '' THEN '{}'::varchar(255)[] ELSE string_to_array(t, ',')::varchar(255)[] END
		FROM unnest($3::jsonb[], $4::text[], $5::smallint[], $6::text[], $7::text[]) AS u(a, k, m, q, t)
		RETURNING id`, now, worker, args, kinds, maxAtt, queues, tags)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// claimedSQLite is one element of insertClaimedSQLite's array.
type claimedSQLite struct {
	Args        json.RawMessage `json:"a"`
	Kind        string          `json:"k"`
	MaxAttempts int16           `json:"m"`
	Queue       string          `json:"q"`
	Tags        []string        `json:"t"`
}

// insertClaimedSQLite inserts claimed jobs on SQLite, in riversqlite's column formats
// (JSONB columns, times as its text), from one JSON array (no bound on the batch from
// SQLite's parameter limit), and returns their ids in order. The rows are inserted in
// the array's order and river_job's ids are AUTOINCREMENT, given out in insert order on
// the one connection: sorted, the ids RETURNING gives (in an order SQLite leaves
// unspecified) are the array's.
func insertClaimedSQLite(ctx context.Context, tx *sql.Tx, now time.Time, worker string, args [][]byte,
	kinds []string, maxAtt []int16, queues []string, tags [][]string) ([]int64, error) {
	rows := make([]claimedSQLite, len(args))
	for i := range rows {
		rows[i] = claimedSQLite{Args: args[i], Kind: kinds[i], MaxAttempts: maxAtt[i], Queue: queues[i], Tags: tags[i]}
		if rows[i].Tags == nil {
			rows[i].Tags = []string{}
		}
	}
	arg, err := json.Marshal(rows)
	if err != nil {
		return nil, hub.Errorf(hub.InvalidArgument, "ledger: encode claimed jobs: %v", err)
	}
	ids, err := queryIDs(ctx, tx, `INSERT INTO river_job (args, attempt, attempted_at, attempted_by,
			created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
		SELECT jsonb(value -> '$.a'), 1, ?1, jsonb(json_array(?2)), ?1, value ->> '$.k', value ->> '$.m',
			jsonb('{}'), 1, value ->> '$.q', ?1, 'running', jsonb(value -> '$.t')
		FROM json_each(?3) ORDER BY key
		RETURNING id`, sqliteTime(now), worker, string(arg))
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return ids, nil
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
	// keep returns the params of the states whose jobs run under their holders, given
	// the ids of those that run under another one.
	keep := func(other map[int64]bool) *riverdriver.JobSetStateIfRunningManyParams {
		p := &riverdriver.JobSetStateIfRunningManyParams{Now: &now, Schema: l.cfg.Schema}
		for _, s := range states {
			if other[s.ID] {
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
		return p
	}
	if l.backend == SQLite {
		return l.setStateHeldSQLite(ctx, ids, holders, keep)
	}
	return pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT j.id, j.attempted_by[array_upper(j.attempted_by, 1)] IS DISTINCT FROM u.holder
			FROM `+l.Table("river_job")+` AS j JOIN unnest($1::bigint[], $2::text[]) AS u(id, holder) ON j.id = u.id
			WHERE j.state = 'running' ORDER BY j.id FOR UPDATE OF j`, ids, holders)
		if err != nil {
			return err
		}
		other := make(map[int64]bool)
		var (
			id int64
			ot bool
		)
		if _, err := pgx.ForEachRow(rows, []any{&id, &ot}, func() error {
			other[id] = ot
			return nil
		}); err != nil {
			return err
		}
		if p := keep(other); len(p.ID) > 0 {
			_, err = riverpgxv5.New(nil).UnwrapExecutor(tx).JobSetStateIfRunningMany(ctx, p)
		}
		return err
	})
}

// heldSQLite returns, for a JSON array of {"id", "holder"}, each job still running and
// whether another worker than holder holds it. The unary + keeps the planner off the
// state index, as in completeSQL: without statistics it would walk every running job (a
// burst's claimed deliveries are running too) against the whole array; the array
// drives, each job found by its rowid.
const heldSQLite = `SELECT j.id, json_extract(j.attempted_by, '$[#-1]') IS NOT u.holder
	FROM river_job AS j JOIN (SELECT value ->> '$.id' AS id, value ->> '$.holder' AS holder FROM json_each(?)) AS u
		ON j.id = u.id
	WHERE +j.state = 'running'`

// setStateHeldSQLite is setStateHeld on SQLite: the check and River's statement in one
// transaction of the one connection, so nothing takes a job over between them.
func (l *Ledger) setStateHeldSQLite(ctx context.Context, ids []int64, holders []string,
	keep func(other map[int64]bool) *riverdriver.JobSetStateIfRunningManyParams) error {
	type held struct {
		ID     int64  `json:"id"`
		Holder string `json:"holder"`
	}
	list := make([]held, len(ids))
	for i := range ids {
		list[i] = held{ids[i], holders[i]}
	}
	arg, err := json.Marshal(list)
	if err != nil {
		return err
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	rs, err := tx.QueryContext(ctx, heldSQLite, string(arg))
	if err != nil {
		return err
	}
	other := make(map[int64]bool)
	for rs.Next() {
		var (
			id int64
			ot bool
		)
		if err := rs.Scan(&id, &ot); err != nil {
			rs.Close()
			return err
		}
		other[id] = ot
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return err
	}
	if p := keep(other); len(p.ID) > 0 {
		if _, err := riversqlite.New(nil).UnwrapExecutor(tx).JobSetStateIfRunningMany(ctx, p); err != nil {
			return err
		}
	}
	return tx.Commit()
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
	if l.backend == SQLite {
		return completeRunningSQLite(ctx, l.db, ids, holders, patches, at)
	}
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

// completeRunningSQLite is completeRunning on SQLite: the batched completion's own
// statement (sqlite_complete.go) with each job's holder, for the jobs whose metadata
// patch json_patch applies as River's merge does; the others are left for River's
// statement (setStateHeld), as that completion leaves them.
func completeRunningSQLite(ctx context.Context, db querier, ids []int64, holders []string, patches [][]byte, at time.Time) (map[int64]bool, error) {
	left := make(map[int64]bool, len(ids))
	batch := make([]completion, 0, len(ids))
	for i, id := range ids {
		left[id] = true
		if holders[i] == "" {
			continue // matches no holder, as on PostgreSQL (completeSQL would read "" as "any")
		}
		c, ok := plainCompletion(id, at, patches[i] != nil, patches[i])
		if !ok {
			continue
		}
		c.Holder = holders[i]
		batch = append(batch, c)
	}
	if len(batch) == 0 {
		return left, nil
	}
	arg, err := json.Marshal(batch)
	if err != nil {
		return nil, err
	}
	done, err := completedIDs(ctx, db, arg)
	if err != nil {
		return nil, err
	}
	for id := range done {
		delete(left, id)
	}
	return left, nil
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
