package webhook

import (
	"context"
	"fmt"

	"github.com/riverqueue/river/rivertype"
)

// DeliveryCounts returns how many deliveries the ledger holds in each state (every
// tenant: an operator's overview). Delivered ones are counted while the ledger keeps
// them (its CompletedRetention). One grouped count over the job table's kind: cheap
// enough to sample every few seconds with hundreds of thousands of rows.
func (t *Transport) DeliveryCounts(ctx context.Context) (map[DeliveryState]int64, error) {
	q := fmt.Sprintf(`SELECT CAST(state AS TEXT), count(*) FROM %s WHERE kind = $1 GROUP BY 1`, t.l.Table("river_job"))
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
	return out, dbErr("delivery counts", rows.Err())
}
