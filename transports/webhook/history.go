package webhook

import (
	"context"
	"time"

	"github.com/koder/eventhub/hub"
)

// Breaker history: every transition of an endpoint's breaker (H3) as a row, so an
// operator can see when an endpoint went down, how often it was probed, and when it came
// back, after the fact and from any replica. The breaker row holds only the current
// state; the process that makes a transition (the one conditional UPDATE that wins)
// appends the row, so each transition is recorded once. Rows are few (a flapping
// endpoint makes a handful a minute at most, bounded by BreakerPause), and the table
// keeps the newest maxHistoryPerEndpoint per endpoint, trimmed as it is written.

// historySQL creates the table (run by migrate with the others).
var historySQL = []string{
	`CREATE TABLE IF NOT EXISTS webhook_breaker_history (
		endpoint_id TEXT NOT NULL,
		at BIGINT NOT NULL,
		state TEXT NOT NULL,
		failures INTEGER NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS webhook_breaker_history_endpoint ON webhook_breaker_history (endpoint_id, at)`,
}

// maxHistoryPerEndpoint bounds the rows kept per endpoint.
const maxHistoryPerEndpoint = 200

// historyTimeout bounds recording one transition: it runs in the attempt's path and
// must not hold a worker if the database is slow (the transition itself is stored).
const historyTimeout = 2 * time.Second

// BreakerTransition is one change of an endpoint's breaker.
type BreakerTransition struct {
	At    time.Time    `json:"at"`
	State BreakerState `json:"state"` // the state entered
	// Failures is the count of consecutive failures when it changed.
	Failures int `json:"failures"`
}

// recordTransition appends a transition; a failure is logged, never returned (the
// breaker row, which decides deliveries, is already written).
func (t *Transport) recordTransition(id string, to BreakerState) {
	ctx, cancel := context.WithTimeout(context.Background(), historyTimeout)
	defer cancel()
	now := time.Now()
	failures := 0
	if s, err := t.br.get(ctx, id); err == nil {
		failures = s.Failures
	}
	if _, err := t.st.db.ExecContext(ctx, `INSERT INTO webhook_breaker_history (endpoint_id, at, state, failures)
		VALUES ($1, $2, $3, $4)`, id, micros(now), string(to), failures); err != nil {
		t.log.Warn("webhook: breaker history not recorded", "endpoint", id, "err", err)
		return
	}
	// Trim: keep the newest rows of this endpoint.
	_, _ = t.st.db.ExecContext(ctx, `DELETE FROM webhook_breaker_history WHERE endpoint_id = $1 AND at < (
		SELECT MIN(at) FROM (SELECT at FROM webhook_breaker_history WHERE endpoint_id = $1 ORDER BY at DESC LIMIT $2) AS newest)`,
		id, maxHistoryPerEndpoint)
}

// BreakerHistory returns an endpoint's breaker transitions, newest first, at most limit
// (0: every one kept).
func (t *Transport) BreakerHistory(ctx context.Context, endpointID string, limit int) ([]BreakerTransition, error) {
	if limit <= 0 || limit > maxHistoryPerEndpoint {
		limit = maxHistoryPerEndpoint
	}
	rows, err := t.st.db.QueryContext(ctx, `SELECT at, state, failures FROM webhook_breaker_history
		WHERE endpoint_id = $1 ORDER BY at DESC LIMIT $2`, endpointID, limit)
	if err != nil {
		return nil, dbErr("breaker history", err)
	}
	defer rows.Close()
	out := []BreakerTransition{}
	for rows.Next() {
		var (
			at       int64
			state    string
			failures int
		)
		if err := rows.Scan(&at, &state, &failures); err != nil {
			return nil, dbErr("breaker history", err)
		}
		out = append(out, BreakerTransition{At: fromMicros(at), State: BreakerState(state), Failures: failures})
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("breaker history", err)
	}
	return out, nil
}

// deleteHistory drops an endpoint's history with the endpoint.
func (t *Transport) deleteHistory(ctx context.Context, id string) error {
	_, err := t.st.db.ExecContext(ctx, `DELETE FROM webhook_breaker_history WHERE endpoint_id = $1`, id)
	if err != nil {
		return hub.Errorf(hub.Unavailable, "webhook: breaker history: %w", err)
	}
	return nil
}
