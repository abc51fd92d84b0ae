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
// then records a hub.transport.failed event. The queued count is read in the insert's
// transaction, after a lock (see room) that makes concurrent fan-outs to one capped
// endpoint take turns until each commits: the cap holds exactly, at the price of those
// fan-outs' transactions queueing on each other (only where a cap is set).

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

// queued counts ep's waiting deliveries in tx, up to limit+1 (enough to tell "over").
func (t *Transport) queued(ctx context.Context, tx any, epID string, limit int) (int, error) {
	match := `args @> jsonb_build_object('endpoint_id', $1::text)` // River's GIN index on args
	if t.l.Backend() == ledger.SQLite {
		match = `json_extract(args, '$.endpoint_id') = $1`
	}
	var n int
	err := queryEach(ctx, tx, `SELECT count(*) FROM (SELECT 1 FROM `+t.l.Table("river_job")+`
		WHERE kind = 'webhook_delivery' AND `+match+`
		AND state IN ('available', 'pending', 'running', 'retryable', 'scheduled') LIMIT $2) q`,
		[]any{epID, limit + 1}, func(scan func(...any) error) error { return scan(&n) })
	return n, dbErr("count queued deliveries", err)
}

// lockQueuedSQL takes a transaction-scoped advisory lock per endpoint id of $1 (by its
// hashtext; a collision only makes two endpoints wait for each other), in hash order so
// that two fan-outs never hold one lock each while waiting for the other's.
const lockQueuedSQL = `SELECT count(pg_advisory_xact_lock(hashtext('eventhub.webhook.max_queued'), h))
	FROM (SELECT DISTINCT hashtext(id) AS h FROM unnest($1::text[]) AS id ORDER BY 1) AS s`

// room returns, for each endpoint of capped (each has a cap), how many deliveries it
// may still take, counted in tx. On PostgreSQL it first locks the endpoints in tx until
// tx ends, so a concurrent fan-out to one of them counts only after this one's
// deliveries are committed (or rolled back) and the cap holds exactly; on SQLite tx is
// the one writer's and nothing else can insert meanwhile.
func (t *Transport) room(ctx context.Context, tx any, capped []*Endpoint) (map[string]int, error) {
	if len(capped) == 0 {
		return nil, nil
	}
	if t.l.Backend() == ledger.Postgres {
		ids := make([]string, len(capped))
		for i, ep := range capped {
			ids[i] = ep.ID
		}
		err := queryEach(ctx, tx, lockQueuedSQL, []any{ids}, func(scan func(...any) error) error {
			var n int64
			return scan(&n)
		})
		if err != nil {
			return nil, dbErr("lock capped endpoints", err)
		}
	}
	out := make(map[string]int, len(capped))
	for _, ep := range capped {
		c := t.queuedCap(ep)
		n, err := t.queued(ctx, tx, ep.ID, c)
		if err != nil {
			return nil, err
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
