package webhook

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// Fan-out limits keep one tenant (or one dead receiver) from flooding the ledger:
//
//   - Config.MaxEndpointsPerEvent caps how many endpoints of the event's tenant one
//     event may fan out to. An event over it gets no delivery at all (never a
//     partial, arbitrary subset) and Send fails with ResourceExhausted naming the
//     tenant and the count.
//   - Config.MaxQueuedPerEndpoint (or an endpoint's Controls.MaxQueued) caps the
//     deliveries waiting for one endpoint (queued, retrying, deferred: not yet
//     delivered or dead). Send still inserts the deliveries of every endpoint under
//     its cap, then fails with ResourceExhausted naming the endpoints over theirs.
//     Deliveries are unique per (endpoint, event), so the caller's retry of the same
//     Send adds only what is missing once the endpoint drains.
//
// Either way the event is not dropped: Send's error is the caller's. Through the
// outbox, the row is retried with backoff (ResourceExhausted is retryable) and ends
// dead and resendable if the endpoint never drains; on a direct route the hub retries,
// then records a hub.transport.failed event. The count is read before the insert, so
// fan-outs running at the same moment may each see room: the cap can be passed by at
// most their number of events.

// endpointsCap is the error of an event of tenant matching n endpoints, nil within the cap.
func (t *Transport) endpointsCap(tenant string, n int) error {
	if t.cfg.MaxEndpointsPerEvent > 0 && n > t.cfg.MaxEndpointsPerEvent {
		return hub.Errorf(hub.ResourceExhausted,
			"webhook: an event of tenant %q matches %d endpoints, above MaxEndpointsPerEvent %d: no delivery queued (narrow the endpoints' patterns or filters, or raise the limit)",
			tenant, n, t.cfg.MaxEndpointsPerEvent)
	}
	return nil
}

// queuedCap is the cap on ep's waiting deliveries (0 = none).
func (t *Transport) queuedCap(ep *Endpoint) int {
	if ep.Controls.MaxQueued > 0 {
		return ep.Controls.MaxQueued
	}
	return t.cfg.MaxQueuedPerEndpoint
}

// queued counts ep's waiting deliveries, up to limit+1 (enough to tell "over").
func (t *Transport) queued(ctx context.Context, q querier, epID string, limit int) (int, error) {
	match := `args @> jsonb_build_object('endpoint_id', $1::text)` // River's GIN index on args
	if t.l.Backend() == ledger.SQLite {
		match = `json_extract(args, '$.endpoint_id') = $1`
	}
	rows, err := q.QueryContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+t.l.Table("river_job")+`
		WHERE kind = 'webhook_delivery' AND `+match+`
		AND state IN ('available', 'pending', 'running', 'retryable', 'scheduled') LIMIT $2) q`, epID, limit+1)
	if err != nil {
		return 0, dbErr("count queued deliveries", err)
	}
	defer func() { _ = rows.Close() }()
	var n int
	if rows.Next() {
		err = rows.Scan(&n)
	}
	if err == nil {
		err = rows.Err()
	}
	return n, dbErr("count queued deliveries", err)
}

// room returns, for every endpoint with a cap among eps, how many deliveries it may
// still take.
func (t *Transport) room(ctx context.Context, q querier, eps []*Endpoint) (map[string]int, error) {
	var out map[string]int
	for _, ep := range eps {
		c := t.queuedCap(ep)
		if c <= 0 {
			continue
		}
		n, err := t.queued(ctx, q, ep.ID, c)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]int{}
		}
		out[ep.ID] = max(0, c-n)
	}
	return out, nil
}

// overQueued is the error for the endpoints whose cap refused deliveries.
func overQueued(refused map[string]int) error {
	if len(refused) == 0 {
		return nil
	}
	ids := make([]string, 0, len(refused))
	for id, n := range refused {
		ids = append(ids, fmt.Sprintf("%s (%d refused)", id, n))
	}
	sort.Strings(ids)
	return hub.Errorf(hub.ResourceExhausted,
		"webhook: endpoints at their cap of queued deliveries: %s; the other deliveries are queued, send again once they drain",
		strings.Join(ids, ", "))
}
