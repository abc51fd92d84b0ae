package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// River's completer hands finished jobs to the driver in batches, and riversqlite runs
// one UPDATE ... RETURNING per job ("Should be a batch update, but that's currently
// impossible with SQLite/sqlc", its source says), each merging the job's metadata with
// a recursive CTE. On the embedded default that was the largest single cost: profiled
// under load, a third of the hub's CPU, all of it holding SQLite's one connection, so
// the inserts and fetches queued behind it.
//
// completingExecutor does the common case, a job completed by its worker, for the
// whole batch in one UPDATE (the ids, times and metadata patches as one JSON array),
// in one transaction. Everything else in the batch (retries, snoozes, cancels,
// discards, errors, a job no longer running, metadata River's merge and SQLite's
// json_patch would treat differently) goes to River's per-job path in the same
// transaction, so the table ends as River's driver leaves it; a batch the UPDATE
// cannot take goes there whole.
//
// The jobs the UPDATE completed are returned as their id, state and finalized_at, not
// read back whole: River's completer reads only a returned job's state (to tell a
// completion from a job changed concurrently) and hands the rows to its subscription
// manager, which passes them on only to Subscribe channels, and the ledger opens none
// (it gives nobody its River client). Reading them back (River's JobGetByIDMany:
// every column, a delivery's request body among them, decoded) held the one
// connection for about a tenth of the embedded default's CPU under load.
//
// When the batched UPDATE equals River's: River's JobSetStateIfRunning, with state
// completed, changes only state, finalized_at and metadata (its should_cancel branch
// is for available, retryable and scheduled); its metadata merge sets each top-level
// key of the update (jsonb_set, nulls kept) on an object. json_patch (RFC 7396) does
// the same for every top-level value that is neither an object (merged recursively)
// nor null (deleted), so only such patches are batched, and only for rows whose
// metadata is an object.
type completingExecutor struct {
	riverdriver.Executor
	d *sqliteDriver
}

// completeSQL finishes the running jobs of a JSON array of {"id", "at", "patch"?,
// "holder"?}, except those whose metadata is not JSON (changed out of band: River's
// path reads them back as it can) or, with a patch, not an object, and those running
// under another worker than holder, when given (a claimed job taken over, claimed.go). The
// unary + keeps the planner off the state index (scanning every running job, each
// against the whole array): the array drives, each job found by its rowid.
const completeSQL = `UPDATE river_job SET
	state = 'completed',
	finalized_at = u.at,
	metadata = CASE WHEN u.patch IS NULL THEN river_job.metadata ELSE jsonb_patch(river_job.metadata, u.patch) END
FROM (SELECT value ->> '$.id' AS id, value ->> '$.at' AS at, value -> '$.patch' AS patch,
	value ->> '$.holder' AS holder FROM json_each(?)) AS u
WHERE river_job.id = u.id AND +river_job.state = 'running'
	AND (u.holder IS NULL OR json_extract(river_job.attempted_by, '$[#-1]') = u.holder)
	AND CASE WHEN typeof(river_job.metadata) = 'text' AND NOT json_valid(river_job.metadata) THEN 0
		WHEN u.patch IS NULL THEN 1
		ELSE json_type(river_job.metadata) = 'object' END
RETURNING river_job.id`

// completion is one element of completeSQL's array.
type completion struct {
	idx   int             // in the params
	ID    int64           `json:"id"`
	At    string          `json:"at"`
	Patch json.RawMessage `json:"patch,omitempty"`
	// Holder, when set, is the worker the job must still run under.
	Holder string `json:"holder,omitempty"`
}

// JobGetAvailable is River's, counted when it returns: a test that reads the count
// before and after a change of its own sees every fetch that may have read the change,
// one still in flight at the first read included.
func (e *completingExecutor) JobGetAvailable(ctx context.Context, p *riverdriver.JobGetAvailableParams) (*riverdriver.JobGetAvailableResult, error) {
	defer e.d.fetches.Add(1)
	return e.Executor.JobGetAvailable(ctx, p)
}

func (e *completingExecutor) JobSetStateIfRunningMany(ctx context.Context, p *riverdriver.JobSetStateIfRunningManyParams) ([]*rivertype.JobRow, error) {
	batch, rest := splitCompletions(p)
	if len(batch) == 0 {
		return e.Executor.JobSetStateIfRunningMany(ctx, p)
	}
	rows, err := e.completeBatched(ctx, p, batch, rest)
	if err != nil && ctx.Err() == nil {
		// Something in the batch the UPDATE could not take (a metadata blob changed
		// out of band to what json_type rejects): the whole batch was rolled back, and
		// River's path decides, as it would have.
		return e.Executor.JobSetStateIfRunningMany(ctx, p)
	}
	return rows, err
}

// completeBatched runs completeSQL over batch (indexes into p) and River's per-job
// path over rest and over the batched jobs the UPDATE did not take, in one transaction.
func (e *completingExecutor) completeBatched(ctx context.Context, p *riverdriver.JobSetStateIfRunningManyParams, batch []completion, rest []int) ([]*rivertype.JobRow, error) {
	arg, err := json.Marshal(batch)
	if err != nil {
		return nil, err
	}
	tx, err := e.d.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	done, err := completedIDs(ctx, tx, arg)
	if err != nil {
		return nil, err
	}
	exec := e.d.UnwrapExecutor(tx)
	rows := make([]*rivertype.JobRow, 0, len(p.ID))
	for _, c := range batch {
		if _, ok := done[c.ID]; !ok {
			rest = append(rest, c.idx) // not running any more, or metadata completeSQL leaves
			continue
		}
		at := p.FinalizedAt[c.idx].UTC().Round(time.Millisecond) // as stored (sqliteTime)
		rows = append(rows, &rivertype.JobRow{ID: c.ID, State: rivertype.JobStateCompleted, FinalizedAt: &at})
	}
	if len(rest) > 0 {
		more, err := exec.JobSetStateIfRunningMany(ctx, subParams(p, rest))
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	e.d.batched.Add(int64(len(done)))
	return rows, nil
}

// completedIDs runs completeSQL and returns the ids it finished.
func completedIDs(ctx context.Context, tx querier, arg []byte) (map[int64]struct{}, error) {
	ids, err := queryIDs(ctx, tx, completeSQL, string(arg))
	if err != nil {
		return nil, err
	}
	done := make(map[int64]struct{}, len(ids))
	for _, id := range ids {
		done[id] = struct{}{}
	}
	return done, nil
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryIDs runs query, whose rows are job ids, and returns them in the order read.
func queryIDs(ctx context.Context, q querier, query string, args ...any) ([]int64, error) {
	rs, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var ids []int64
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rs.Err()
}

// splitCompletions sorts p's jobs into the ones completeSQL finishes exactly as
// River's path would (see completingExecutor) and the indexes of the rest.
func splitCompletions(p *riverdriver.JobSetStateIfRunningManyParams) (batch []completion, rest []int) {
	if p.Schema != "" {
		return nil, nil // PostgreSQL only in this ledger; never batched
	}
	for i := range p.ID {
		c, ok := batchable(p, i)
		if !ok {
			rest = append(rest, i)
			continue
		}
		c.idx = i
		batch = append(batch, c)
	}
	return batch, rest
}

// batchable reports whether job i of p is a plain completion and its completeSQL form.
func batchable(p *riverdriver.JobSetStateIfRunningManyParams, i int) (completion, bool) {
	if p.State[i] != rivertype.JobStateCompleted || p.Attempt[i] != nil || p.ErrData[i] != nil ||
		p.ScheduledAt[i] != nil || p.FinalizedAt[i] == nil {
		return completion{}, false
	}
	return plainCompletion(p.ID[i], *p.FinalizedAt[i], p.MetadataDoMerge[i], p.MetadataUpdates[i])
}

// plainCompletion is completeSQL's element for job id completed at at, its metadata
// merged with updates when merge is set; ok false when the merge is one json_patch
// would do differently from River's (mergePatch).
func plainCompletion(id int64, at time.Time, merge bool, updates []byte) (completion, bool) {
	c := completion{ID: id, At: sqliteTime(at)}
	if !merge {
		return c, true
	}
	patch, ok := mergePatch(updates)
	if !ok {
		return completion{}, false
	}
	c.Patch = patch
	return c, true
}

// mergePatch returns updates as a json_patch argument that sets exactly what River's
// metadata merge sets: a JSON object without duplicate keys (River's merge reads a
// duplicated key's first value, json_patch its last) whose values are neither objects
// nor null. ok false for anything else.
func mergePatch(updates []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(updates))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey || seen[key] {
			return nil, false
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil || len(v) == 0 || v[0] == '{' || v[0] == 'n' {
			return nil, false
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // trailing data
	}
	return updates, true
}

// sqliteTime is riversqlite's timeString: the one text format its time columns compare
// correctly in.
func sqliteTime(t time.Time) string {
	return t.UTC().Round(time.Millisecond).Format("2006-01-02 15:04:05.000")
}

// subParams is p restricted to the jobs at idx.
func subParams(p *riverdriver.JobSetStateIfRunningManyParams, idx []int) *riverdriver.JobSetStateIfRunningManyParams {
	s := &riverdriver.JobSetStateIfRunningManyParams{Now: p.Now, Schema: p.Schema}
	for _, i := range idx {
		s.ID = append(s.ID, p.ID[i])
		s.Attempt = append(s.Attempt, p.Attempt[i])
		s.ErrData = append(s.ErrData, p.ErrData[i])
		s.FinalizedAt = append(s.FinalizedAt, p.FinalizedAt[i])
		s.MetadataDoMerge = append(s.MetadataDoMerge, p.MetadataDoMerge[i])
		s.MetadataUpdates = append(s.MetadataUpdates, p.MetadataUpdates[i])
		s.ScheduledAt = append(s.ScheduledAt, p.ScheduledAt[i])
		s.State = append(s.State, p.State[i])
	}
	return s
}
