package webhook

import (
	"context"
	"fmt"
	"maps"
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
// transaction and, on PostgreSQL, completed under a lock that makes concurrent
// fan-outs to one capped endpoint take turns from the lock to their commit, but not
// while counting (see room): the cap is never passed (only fan-outs reaching a capped
// endpoint pay for it).

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
	var n int
	err := queryEach(ctx, tx, `SELECT `+t.queuedSQL("$1", "$2"), []any{epID, limit + 1},
		func(scan func(...any) error) error { return scan(&n) })
	return n, dbErr("count queued deliveries", err)
}

// queuedSQL is the count of the waiting deliveries of endpoint id, up to limit rows
// (both SQL expressions). waitingIndex serves it.
func (t *Transport) queuedSQL(id, limit string) string {
	return `(SELECT count(*) FROM (SELECT 1 FROM ` + t.l.Table("river_job") + `
		WHERE ` + waitingDeliveries + ` AND ` + t.argExpr("endpoint_id") + ` = ` + id + `
		LIMIT ` + limit + `) q)`
}

// waitingDeliveries is what makes a job a waiting delivery: queuedSQL's condition and
// the predicate of its index, in the same words (PostgreSQL and SQLite use a partial
// index only for a query whose condition implies the index's; SQLite's test is nearly
// textual).
const waitingDeliveries = `kind = 'webhook_delivery' AND state IN ('available', 'pending', 'running', 'retryable', 'scheduled')`

// waitingIndex indexes the waiting deliveries by endpoint, for the count of a capped
// endpoint's queue. On PostgreSQL River's own GIN index on args served the count before
// and is dropped by the ledger (it cost every job an entry per JSON key and value,
// ledger/open.go); SQLite had no index for it, so a capped fan-out scanned the waiting
// deliveries of every endpoint while holding the one connection, a long scan exactly
// when backlogs are what the cap is for. This one costs a delivery one entry while it
// waits, none once it is finished (about 2% of the embedded default's batched
// throughput, docs/BENCHMARKS.md), and finds an endpoint's waiting deliveries without
// reading anyone else's.
func (t *Transport) waitingIndex() ledger.Index {
	return ledger.Index{Name: "webhook_delivery_waiting", Table: "river_job",
		Def: `(` + t.argExpr("endpoint_id") + `) WHERE ` + waitingDeliveries}
}

// lockQueuedSQL takes a transaction-scoped advisory lock per endpoint id of $1 (by its
// hashtext; a collision only makes two endpoints wait for each other), in hash order so
// that two fan-outs never hold one lock each while waiting for the other's.
const lockQueuedSQL = `SELECT count(pg_advisory_xact_lock(hashtext('eventhub.webhook.max_queued'), h))
	FROM (SELECT DISTINCT hashtext(id) AS h FROM unnest($1::text[]) AS id ORDER BY 1) AS s`

// room returns, for each endpoint of capped (each has a cap), how many deliveries it
// may still take, and, on PostgreSQL, take: given the room left once the fan-out has
// queued its deliveries, it advances each endpoint's clock by what was taken, in tx.
//
// On SQLite tx is the one writer's: nothing else inserts meanwhile and the count in tx
// is exact. On PostgreSQL counting under a lock that serializes the fan-outs to an
// endpoint would make them take turns for as long as each count runs (a backlog of
// 50 000 waiting deliveries is over 100 ms to count), so the count runs first,
// unlocked, in one statement with the endpoint's clock (how many deliveries capped
// fan-outs ever inserted for it, bumped in the inserting transaction). Then the
// endpoints are locked until tx ends and their clocks read again (a new statement at
// READ COMMITTED, the default, sees what committed before the lock): every capped insert
// committed since the count moved the clock, so count + the clock's advance bounds the
// waiting deliveries from above (deliveries finished since only lower it). The cap is
// never passed; a fan-out may be refused by what finished during it.
func (t *Transport) room(ctx context.Context, tx any, capped []*Endpoint) (map[string]int, func(map[string]int) error, error) {
	if len(capped) == 0 {
		return nil, nil, nil
	}
	out := make(map[string]int, len(capped))
	if t.l.Backend() != ledger.Postgres {
		for _, ep := range capped {
			c := t.queuedCap(ep)
			n, err := t.queued(ctx, tx, ep.ID, c)
			if err != nil {
				return nil, nil, err
			}
			out[ep.ID] = max(0, c-n)
		}
		return out, nil, nil
	}
	ids := make([]string, len(capped))
	limits := make([]int64, len(capped)) // each cap + 1: enough to tell "over"
	for i, ep := range capped {
		ids[i], limits[i] = ep.ID, int64(t.queuedCap(ep))+1
	}
	type seen struct{ n, clock int64 }
	before := make(map[string]seen, len(capped))
	err := queryEach(ctx, tx, `SELECT e.id, `+t.queuedSQL("e.id", "e.lim")+`,
		COALESCE((SELECT inserted FROM webhook_cap_clock c WHERE c.endpoint_id = e.id), 0)
		FROM unnest($1::text[], $2::bigint[]) AS e(id, lim)`, []any{ids, limits},
		func(scan func(...any) error) error {
			var id string
			var s seen
			if err := scan(&id, &s.n, &s.clock); err != nil {
				return err
			}
			before[id] = s
			return nil
		})
	if err != nil {
		return nil, nil, dbErr("count queued deliveries", err)
	}
	if err := queryEach(ctx, tx, lockQueuedSQL, []any{ids}, func(scan func(...any) error) error {
		var n int64
		return scan(&n)
	}); err != nil {
		return nil, nil, dbErr("lock capped endpoints", err)
	}
	clock := make(map[string]int64, len(capped))
	err = queryEach(ctx, tx, `SELECT endpoint_id, inserted FROM webhook_cap_clock WHERE endpoint_id = ANY($1::text[])`,
		[]any{ids}, func(scan func(...any) error) error {
			var id string
			var n int64
			if err := scan(&id, &n); err != nil {
				return err
			}
			clock[id] = n
			return nil
		})
	if err != nil {
		return nil, nil, dbErr("read cap clocks", err)
	}
	for i, id := range ids {
		b := before[id]
		waiting := b.n + clock[id] - b.clock
		out[id] = int(max(0, limits[i]-1-waiting))
	}
	start := maps.Clone(out)
	take := func(left map[string]int) error {
		var tids []string
		var ns []int64
		for id, r := range start {
			if n := r - left[id]; n > 0 {
				tids, ns = append(tids, id), append(ns, int64(n))
			}
		}
		if len(tids) == 0 {
			return nil
		}
		return dbErr("advance cap clocks", queryEach(ctx, tx, `INSERT INTO webhook_cap_clock (endpoint_id, inserted)
			SELECT * FROM unnest($1::text[], $2::bigint[])
			ON CONFLICT (endpoint_id) DO UPDATE SET inserted = webhook_cap_clock.inserted + excluded.inserted`,
			[]any{tids, ns}, func(func(...any) error) error { return nil }))
	}
	return out, take, nil
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
