package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// Operations for the admin API and CLI. A row is "dead" when River discarded it (its
// attempts ran out) or cancelled it (a permanent error, an unknown destination, or an
// operator's cancel); both keep their errors and can be resent.

var deadStates = []rivertype.JobState{rivertype.JobStateDiscarded, rivertype.JobStateCancelled}

// DestinationStats counts one destination's rows that are not delivered yet.
type DestinationStats struct {
	Destination string `json:"destination"`
	Pending     int64  `json:"pending"` // waiting: available, scheduled, retryable
	Running     int64  `json:"running"` // held by a relay now
	Dead        int64  `json:"dead"`    // discarded or cancelled: waiting for a resend
}

// Stats returns the counts per destination, sorted by destination. Delivered rows are
// not counted (River keeps them only for the ledger's CompletedRetention).
func (o *Outbox) Stats(ctx context.Context) ([]DestinationStats, error) {
	dest := "args->>'destination'"
	q := "SELECT %s, state::text, count(*) FROM %s WHERE kind = $1 AND state <> 'completed' GROUP BY 1, 2 ORDER BY 1"
	if o.l.Backend() == ledger.SQLite {
		dest = "json_extract(args, '$.destination')"
		q = "SELECT %s, state, count(*) FROM %s WHERE kind = ? AND state <> 'completed' GROUP BY 1, 2 ORDER BY 1"
	}
	rows, err := o.l.DB().QueryContext(ctx, fmt.Sprintf(q, dest, o.l.Table("river_job")), Kind)
	if err != nil {
		return nil, classify("outbox: stats", err)
	}
	defer rows.Close()
	var out []DestinationStats
	for rows.Next() {
		var d, state string
		var n int64
		if err := rows.Scan(&d, &state, &n); err != nil {
			return nil, classify("outbox: stats", err)
		}
		if len(out) == 0 || out[len(out)-1].Destination != d {
			out = append(out, DestinationStats{Destination: d})
		}
		s := &out[len(out)-1]
		switch rivertype.JobState(state) {
		case rivertype.JobStateRunning:
			s.Running += n
		case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
			s.Dead += n
		default:
			s.Pending += n
		}
	}
	return out, classify("outbox: stats", rows.Err())
}

// DeadRow is a dead-lettered row with the errors of its attempts.
type DeadRow struct {
	ID          int64     `json:"id"`
	Destination string    `json:"destination"`
	EventID     string    `json:"event_id"`
	EventType   string    `json:"event_type"`
	State       string    `json:"state"` // discarded (attempts ran out) or cancelled (permanent error)
	Attempts    int       `json:"attempts"`
	Errors      []string  `json:"errors"` // one per failed attempt, oldest first
	CreatedAt   time.Time `json:"created_at"`
	FinalizedAt time.Time `json:"finalized_at"`
}

// LastError is the error of the last attempt.
func (r DeadRow) LastError() string {
	if len(r.Errors) == 0 {
		return ""
	}
	return r.Errors[len(r.Errors)-1]
}

// DeadQuery selects dead rows: of one destination ("" = all), with ids above AfterID
// (paging), at most Limit (default 100, at most 10000), in id order.
type DeadQuery struct {
	Destination string
	AfterID     int64
	Limit       int
}

// Dead lists dead rows.
func (o *Outbox) Dead(ctx context.Context, q DeadQuery) ([]DeadRow, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	p := river.NewJobListParams().Kinds(Kind).States(deadStates...).
		OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(min(limit, 10_000))
	if q.Destination != "" {
		p = p.Where(o.destPredicate(), river.NamedArgs{"destination": q.Destination})
	}
	if q.AfterID > 0 {
		p = p.Where("id > @after_id", river.NamedArgs{"after_id": q.AfterID})
	}
	res, err := o.l.JobList(ctx, p)
	if err != nil {
		return nil, classify("outbox: list dead", err)
	}
	out := make([]DeadRow, 0, len(res.Jobs))
	for _, j := range res.Jobs {
		var a rowArgs
		_ = json.Unmarshal(j.EncodedArgs, &a) // a row that does not decode still lists
		r := DeadRow{ID: j.ID, Destination: a.Destination, EventID: a.EventID, EventType: a.EventType,
			State: string(j.State), Attempts: j.Attempt, CreatedAt: j.CreatedAt}
		if j.FinalizedAt != nil {
			r.FinalizedAt = *j.FinalizedAt
		}
		for _, e := range j.Errors {
			r.Errors = append(r.Errors, e.Error)
		}
		out = append(out, r)
	}
	return out, nil
}

func (o *Outbox) destPredicate() string {
	if o.l.Backend() == ledger.SQLite {
		return "json_extract(args, '$.destination') = @destination"
	}
	return "args->>'destination' = @destination"
}

// Resend makes one row available for delivery now, whatever its state (dead rows get
// one more attempt). A row that is running is left alone. Unknown id: NotFound.
func (o *Outbox) Resend(ctx context.Context, id int64) error {
	j, err := o.l.JobGet(ctx, id)
	if err != nil {
		return classify("outbox: resend", err)
	}
	if j.Kind != Kind {
		return hub.Errorf(hub.NotFound, "outbox: job %d is not an outbox row (kind %s)", id, j.Kind)
	}
	_, err = o.l.JobRetry(ctx, id)
	return classify("outbox: resend", err)
}

// ResendDead resends every dead row of destination ("" = all) and returns how many.
func (o *Outbox) ResendDead(ctx context.Context, destination string) (int, error) {
	n := 0
	var after int64
	for {
		rows, err := o.Dead(ctx, DeadQuery{Destination: destination, AfterID: after, Limit: 1000})
		if err != nil {
			return n, err
		}
		for _, r := range rows {
			if _, err := o.l.JobRetry(ctx, r.ID); err != nil {
				return n, classify("outbox: resend", err)
			}
			n++
			after = r.ID
		}
		if len(rows) < 1000 {
			return n, nil
		}
	}
}

// PurgeDead deletes the dead rows of destination ("" = all) and returns how many. The
// events are gone for good: this is the operator's "we will not deliver these".
func (o *Outbox) PurgeDead(ctx context.Context, destination string) (int, error) {
	n := 0
	for {
		p := river.NewJobDeleteManyParams().Kinds(Kind).States(deadStates...).First(1000)
		if destination != "" {
			p = p.Where(o.destPredicate(), river.NamedArgs{"destination": destination})
		}
		res, err := o.l.JobDeleteMany(ctx, p)
		if err != nil {
			return n, classify("outbox: purge", err)
		}
		n += len(res.Jobs)
		if len(res.Jobs) < 1000 {
			return n, nil
		}
	}
}
