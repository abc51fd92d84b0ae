package webhook

import (
	"context"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// Keyset paging of deliveries, newest first: what a console or an API client pages
// through when the ledger holds hundreds of thousands of them. Deliveries (above) walks
// the whole ledger oldest first to answer one filter; a page instead asks the ledger
// for the rows below a cursor (the last id seen), by the primary key, so page 1000 costs
// what page 1 does. The filters the ledger can apply (state, endpoint and tenant tags,
// the exact event type) run in its query; a type pattern and the time range are checked
// on the rows read, under a bound (maxPageScan) so that a filter matching nothing never
// turns one page into a scan of the ledger: the page then ends early, with a cursor to
// go on from.

// DefaultPageSize is a page's length when DeliveryQuery.Limit is 0.
const DefaultPageSize = 50

// MaxPageSize caps DeliveryQuery.Limit.
const MaxPageSize = 500

// maxPageScan bounds the rows one page reads to fill itself.
const maxPageScan = 5000

// idOrderSlack is how far a delivery's creation time may lag behind one with a larger
// id (ids come from a sequence, times from the inserting transaction's clock, and
// concurrent fan-outs commit in either order). A page walking down past Since stops once
// rows are older than Since by more than this.
const idOrderSlack = time.Minute

// DeliveryQuery selects one page of deliveries, newest first.
type DeliveryQuery struct {
	// DeliveryFilter: endpoint, event id, tenant, state, time range. Its Limit is
	// ignored (see Limit below).
	DeliveryFilter
	// Type selects event types: an exact type, or a hub pattern (`user.*`, `#`).
	Type string
	// Before is the cursor: only deliveries with a smaller id (0: from the newest).
	Before int64
	// Limit is the page length (0: DefaultPageSize; at most MaxPageSize).
	Limit int
}

// DeliveryPage is one page of a DeliveryQuery.
type DeliveryPage struct {
	Deliveries []*Delivery `json:"deliveries"`
	// Next is the cursor of the following page (its Before); 0 when there is none.
	Next int64 `json:"next,omitempty"`
}

// DeliveryPage returns one page of deliveries matching q, newest first. The tenant
// filter (q.TenantID) runs in the ledger query, as in Deliveries.
func (t *Transport) DeliveryPage(ctx context.Context, q DeliveryQuery) (DeliveryPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	limit = min(limit, MaxPageSize)
	match, exact, err := typeMatcher(q.Type)
	if err != nil {
		return DeliveryPage{}, err
	}
	out := DeliveryPage{Deliveries: []*Delivery{}}
	before, scanned := q.Before, 0
	for {
		batch := min(max(limit+1-len(out.Deliveries), 50), MaxPageSize+1)
		p := river.NewJobListParams().Kinds(deliveryKind).OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(batch)
		if tags := filterTags(q.EndpointID, q.TenantID); len(tags) > 0 {
			p = p.TagsAll(tags...)
		}
		if q.State != "" {
			p = p.States(riverStates(q.State)...)
		}
		if before > 0 {
			p = p.Where("id < @before", river.NamedArgs{"before": before})
		}
		if exact != "" {
			p = p.Where(t.argPredicate("event_type", "event_type"), river.NamedArgs{"event_type": exact})
		}
		res, err := t.l.JobList(ctx, p)
		if err != nil {
			return DeliveryPage{}, hub.Wrap(hub.Unavailable, err)
		}
		for _, j := range res.Jobs {
			before = j.ID
			scanned++
			if !q.Since.IsZero() && j.CreatedAt.Before(q.Since.Add(-idOrderSlack)) {
				return out, nil // ids grow with creation time: nothing older can match
			}
			if !q.covers(j.CreatedAt) {
				continue
			}
			d, err := deliveryFromJob(j)
			if err != nil {
				return DeliveryPage{}, err
			}
			if !q.keeps(d) || !match(d.EventType) {
				continue
			}
			if len(out.Deliveries) == limit {
				// One more row matched: there is a next page, starting after the last shown.
				out.Next = out.Deliveries[limit-1].ID
				return out, nil
			}
			out.Deliveries = append(out.Deliveries, d)
		}
		if len(res.Jobs) < batch {
			return out, nil // the ledger has no more rows below the cursor
		}
		if scanned >= maxPageScan {
			out.Next = before // the scan bound: go on from the last row read
			return out, nil
		}
	}
}

// keeps applies the filter's fields the ledger query cannot (exact ids, the decoded
// tenant: a tag is a hash, so it is checked again, as in Deliveries).
func (f DeliveryFilter) keeps(d *Delivery) bool {
	return (f.EndpointID == "" || d.EndpointID == f.EndpointID) && (f.EventID == "" || d.EventID == f.EventID) &&
		(f.TenantID == "" || d.TenantID == f.TenantID)
}

// typeMatcher compiles a type filter: "" matches everything, a type without wildcards
// is also returned as exact (for the ledger query), a pattern is matched on each row.
func typeMatcher(typ string) (match func(string) bool, exact string, err error) {
	if typ == "" {
		return func(string) bool { return true }, "", nil
	}
	p, err := hub.CompilePattern(typ)
	if err != nil {
		return nil, "", hub.Errorf(hub.InvalidArgument, "webhook: type %q: %v", typ, err)
	}
	if !hasWildcard(typ) {
		exact = typ
	}
	return p.Match, exact, nil
}

func hasWildcard(typ string) bool { return strings.ContainsAny(typ, "*#") }

// argPredicate is a River Where predicate comparing one key of the job's args with a
// named argument, in each backend's JSON syntax.
func (t *Transport) argPredicate(key, arg string) string {
	if t.l.Backend() == ledger.SQLite {
		return "json_extract(args, '$." + key + "') = @" + arg
	}
	return "args->>'" + key + "' = @" + arg
}

// ResendMatching resends every delivery matching q (its cursor and Limit ignored) that
// is not running, up to 100 000 per call, and returns how many. It is the bulk action
// behind a filtered listing ("resend all that match"); ResendDead remains the recovery
// of dead deliveries after an outage. The set is taken first, page by page, so a
// delivery that fails again meanwhile is not resent twice by one call.
func (t *Transport) ResendMatching(ctx context.Context, q DeliveryQuery) (int, error) {
	var ids []int64
	q.Before, q.Limit = 0, MaxPageSize
	for len(ids) < maxBulkResend {
		page, err := t.DeliveryPage(ctx, q)
		if err != nil {
			return 0, err
		}
		for _, d := range page.Deliveries {
			if d.State != DeliveryRunning {
				ids = append(ids, d.ID)
			}
		}
		if page.Next == 0 {
			break
		}
		q.Before = page.Next
	}
	for i, id := range ids {
		if _, err := t.l.JobRetry(ctx, id); err != nil && hub.Code(err) != hub.NotFound {
			return i, err
		}
	}
	return len(ids), nil
}
