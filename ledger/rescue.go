package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// The presence sweep (presence.go): find the workers holding running jobs, test their
// presence, take the jobs of those provably gone. Own SQL rather than River's
// JobGetStuck/JobRescueMany: those select whole rows (a webhook job carries its request
// body) by attempted_at, while this needs only the distinct holders on the common path,
// and its rescue must be guarded by the holder itself: a job that another sweep already
// rescued and a live worker fetched again has a new holder and is left alone, so two
// sweepers never hand one job to two workers. River records the current holder as the
// last element of attempted_by.
//
// The rescue does what River's rescuer does to a stuck job (an attempt error, the
// rescue count in metadata; discarded when out of attempts, cancelled when a cancel
// was requested) but makes it available at once: the worker is known dead, there is
// nothing to wait for.

const rescueReason = "worker %s is gone (its presence ended): taken over without waiting for the lease"

func (l *Ledger) holdersSQL() string {
	if l.backend == Postgres {
		return `SELECT DISTINCT attempted_by[array_upper(attempted_by, 1)] FROM ` + l.Table("river_job") +
			` WHERE state = 'running' AND attempted_by IS NOT NULL`
	}
	return `SELECT DISTINCT json_extract(attempted_by, '$[#-1]') FROM river_job
		WHERE state = 'running' AND attempted_by IS NOT NULL`
}

func (l *Ledger) rescueSQL() string {
	if l.backend == Postgres {
		holder := `attempted_by[array_upper(attempted_by, 1)]`
		doomed := `(metadata ? 'cancel_attempted_at' OR attempt >= max_attempts)`
		return `UPDATE ` + l.Table("river_job") + ` SET
			state = (CASE WHEN metadata ? 'cancel_attempted_at' THEN 'cancelled'
				WHEN attempt >= max_attempts THEN 'discarded' ELSE 'available' END)::` + l.Table("river_job_state") + `,
			finalized_at = CASE WHEN ` + doomed + ` THEN now() END,
			scheduled_at = now(),
			errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', greatest(attempt, 0),
				'error', format($2::text, ` + holder + `), 'trace', '')),
			metadata = metadata || jsonb_build_object('river:rescue_count', coalesce(
				CASE WHEN jsonb_typeof(metadata -> 'river:rescue_count') = 'number'
					THEN (metadata ->> 'river:rescue_count')::int END, 0) + 1)
			WHERE state = 'running' AND ` + holder + ` = ANY($1::text[])`
	}
	holder := `json_extract(attempted_by, '$[#-1]')`
	cancel := `json_type(metadata, '$.cancel_attempted_at') IS NOT NULL`
	return `UPDATE river_job SET
		state = CASE WHEN ` + cancel + ` THEN 'cancelled' WHEN attempt >= max_attempts THEN 'discarded' ELSE 'available' END,
		finalized_at = CASE WHEN ` + cancel + ` OR attempt >= max_attempts THEN datetime('now', 'subsec') END,
		scheduled_at = datetime('now', 'subsec'),
		errors = jsonb(json_insert(json(coalesce(errors, jsonb('[]'))), '$[#]', json_object(
			'at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'attempt', max(attempt, 0),
			'error', printf($2, ` + holder + `), 'trace', ''))),
		metadata = jsonb_set(metadata, '$."river:rescue_count"', coalesce(
			CASE json_type(metadata, '$."river:rescue_count"') WHEN 'integer'
				THEN json_extract(metadata, '$."river:rescue_count"') END, 0) + 1)
		WHERE state = 'running' AND ` + holder + ` IN (SELECT value FROM json_each($1))`
}

// runningHolders returns the distinct workers holding running jobs.
func (l *Ledger) runningHolders(ctx context.Context) ([]string, error) {
	var holders []string
	if l.backend == Postgres {
		rows, err := l.pool.Query(ctx, l.holdersSQL())
		if err != nil {
			return nil, err
		}
		ps, err := pgx.CollectRows(rows, pgx.RowTo[*string])
		return derefs(ps, err)
	}
	rows, err := l.db.QueryContext(ctx, l.holdersSQL())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var h *string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		if h != nil {
			holders = append(holders, *h)
		}
	}
	return holders, rows.Err()
}

func derefs(ps []*string, err error) ([]string, error) {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out, err
}

// rescueHeldBy makes every job still running under one of ids available again and
// returns how many it took.
func (l *Ledger) rescueHeldBy(ctx context.Context, ids []string) (int64, error) {
	if l.backend == Postgres {
		tag, err := l.pool.Exec(ctx, l.rescueSQL(), ids, rescueReason) // format() reads %s as Go does
		return tag.RowsAffected(), err
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return 0, err
	}
	res, err := l.db.ExecContext(ctx, l.rescueSQL(), string(list), rescueReason)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// presenceState is what the sweep remembers between runs: when each foreign worker
// was first seen gone (PostgreSQL's grace counts from there).
type presenceState struct {
	goneSince map[string]time.Time
}

// presenceSweep takes over the running jobs of workers that are provably gone.
func (l *Ledger) presenceSweep(ctx context.Context, st *presenceState) (int64, error) {
	holders, err := l.runningHolders(ctx)
	if err != nil {
		return 0, fmt.Errorf("list running jobs' workers: %w", err)
	}
	own := l.WorkerID()
	candidates := slices.DeleteFunc(holders, func(id string) bool { return id == own || !isWorkerID(id) })
	if len(candidates) == 0 {
		clear(st.goneSince)
		return 0, nil
	}
	gone, err := l.presence.gone(ctx, candidates)
	if err != nil {
		return 0, fmt.Errorf("test presence: %w", err)
	}
	now := time.Now()
	var ripe []string
	for id := range st.goneSince {
		if !gone[id] {
			delete(st.goneSince, id) // back (never, with fresh ids) or its jobs are gone
		}
	}
	for id := range gone {
		first, seen := st.goneSince[id]
		if !seen {
			st.goneSince[id], first = now, now
		}
		if now.Sub(first) >= l.presence.grace() {
			ripe = append(ripe, id)
		}
	}
	if len(ripe) == 0 {
		return 0, nil
	}
	n, err := l.rescueHeldBy(ctx, ripe)
	if err != nil {
		return 0, fmt.Errorf("take over jobs: %w", err)
	}
	for _, id := range ripe {
		delete(st.goneSince, id)
	}
	l.presence.forget(ripe)
	if n > 0 {
		l.cfg.Logger.InfoContext(ctx, "ledger: took over the running jobs of gone workers",
			slog.Int64("jobs", n), slog.Any("workers", ripe))
	}
	return n, nil
}
