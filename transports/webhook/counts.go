package webhook

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/ledger"
)

// deliveredCountTTL is how long DeliveryCounts reuses its count of delivered
// deliveries: that count walks every delivered job the ledger keeps (its
// CompletedRetention: an hour of a busy hub's deliveries), while the other states are
// an index range over the few live and dead rows. The console samples the counts every
// few seconds; on SQLite a walk holds the ledger's only connection, which the ingress
// and the workers wait for.
const deliveredCountTTL = time.Minute

// deliveredCount is the cached count of delivered deliveries.
type deliveredCount struct {
	mu sync.Mutex
	n  int64
	at time.Time
}

// DeliveryCounts returns how many deliveries the ledger holds in each state (every
// tenant: an operator's overview). Delivered ones are counted while the ledger keeps
// them (its CompletedRetention), and that count is up to deliveredCountTTL old; the
// other states are read at each call.
func (t *Transport) DeliveryCounts(ctx context.Context) (map[DeliveryState]int64, error) {
	kind := "kind"
	if t.l.Backend() == ledger.SQLite {
		// SQLite's planner, without statistics, takes the kind index and walks every
		// delivery ever kept; "+kind" leaves it the index that starts with the state.
		kind = "+kind"
	}
	q := fmt.Sprintf(`SELECT CAST(state AS TEXT), count(*) FROM %s
		WHERE state IN ('available', 'scheduled', 'pending', 'retryable', 'running', 'discarded', 'cancelled') AND %s = $1
		GROUP BY 1`, t.l.Table("river_job"), kind)
	rows, err := t.st.db.QueryContext(ctx, q, deliveryKind)
	if err != nil {
		return nil, dbErr("delivery counts", err)
	}
	defer rows.Close()
	out := map[DeliveryState]int64{}
	for rows.Next() {
		var (
			state string
			n     int64
		)
		if err := rows.Scan(&state, &n); err != nil {
			return nil, dbErr("delivery counts", err)
		}
		out[stateOf(rivertype.JobState(state))] += n
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("delivery counts", err)
	}
	n, err := t.countDelivered(ctx)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		out[DeliveryDelivered] = n
	}
	return out, nil
}

// countDelivered returns the count of delivered deliveries, read again once it is
// deliveredCountTTL old.
func (t *Transport) countDelivered(ctx context.Context) (int64, error) {
	c := &t.delivCount
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < deliveredCountTTL {
		return c.n, nil
	}
	var n int64
	err := t.st.db.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE state = 'completed' AND kind = $1`,
		t.l.Table("river_job")), deliveryKind).Scan(&n)
	if err != nil {
		return 0, dbErr("delivery counts", err)
	}
	c.n, c.at = n, time.Now()
	return n, nil
}
