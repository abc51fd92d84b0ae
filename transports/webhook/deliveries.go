package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// Deliveries are the ledger's delivery jobs seen through this package's vocabulary.
// There is no table of our own: the job row already holds the state, attempts, errors
// and (in its metadata) the last status and response excerpt, so recording them costs
// no write beyond the one River makes to finish the attempt.

// DeliveryState is where a delivery stands.
type DeliveryState string

const (
	// DeliveryPending: waiting for its first attempt or its snooze to end.
	DeliveryPending DeliveryState = "pending"
	// DeliveryRunning: an attempt is in flight.
	DeliveryRunning DeliveryState = "running"
	// DeliveryRetrying: failed, the next attempt is scheduled.
	DeliveryRetrying DeliveryState = "retrying"
	// DeliveryDelivered: a 2xx was received.
	DeliveryDelivered DeliveryState = "delivered"
	// DeliveryDead: no further attempt; Reason says why (exhausted, gone, blocked,
	// endpoint_disabled, endpoint_deleted, invalid). Resend to try again.
	DeliveryDead DeliveryState = "dead"
)

// Delivery is one (endpoint, event) delivery.
type Delivery struct {
	ID         int64  `json:"id"`
	EndpointID string `json:"endpoint_id"`
	EventID    string `json:"event_id"`
	EventType  string `json:"event_type"`
	// TenantID is the tenant of the endpoint the delivery went to when it was fanned
	// out ("" for an endpoint of every tenant, and for deliveries made before the field).
	TenantID    string        `json:"tenant_id,omitempty"`
	State       DeliveryState `json:"state"`
	Reason      string        `json:"reason,omitempty"`
	Attempt     int           `json:"attempt"`
	MaxAttempts int           `json:"max_attempts"`
	// LastStatus is the last HTTP status (0: no response); LastResponse the first
	// Config.ResponseExcerpt bytes of the last failed response; LastError its error.
	LastStatus   int    `json:"last_status,omitempty"`
	LastResponse string `json:"last_response,omitempty"`
	LastError    string `json:"last_error,omitempty"`
	LastCode     string `json:"last_code,omitempty"`
	// Errors are every failed attempt's error, oldest first.
	Errors []AttemptError `json:"errors,omitempty"`
	// Attempts are the attempts with status, latency and response excerpt, oldest
	// first (attempts.go).
	Attempts    []Attempt `json:"attempts,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	ScheduledAt time.Time `json:"scheduled_at,omitzero"`
	AttemptedAt time.Time `json:"attempted_at,omitzero"`
	FinalizedAt time.Time `json:"finalized_at,omitzero"`

	header map[string]string
	body   []byte
}

// AttemptError is one failed attempt of a delivery.
type AttemptError struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error"`
}

// Event decodes the delivered event from the request it travels in.
func (d *Delivery) Event() (*cloudevent.Event, error) {
	h := make(http.Header, len(d.header))
	for k, v := range d.header {
		h[k] = []string{v}
	}
	evs, err := cloudevent.FromHTTP(h, d.body)
	if err != nil {
		return nil, err
	}
	return evs[0], nil
}

func stateOf(s rivertype.JobState) DeliveryState {
	switch s {
	case rivertype.JobStateRunning:
		return DeliveryRunning
	case rivertype.JobStateRetryable:
		return DeliveryRetrying
	case rivertype.JobStateCompleted:
		return DeliveryDelivered
	case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
		return DeliveryDead
	}
	return DeliveryPending // available, scheduled, pending
}

func riverStates(s DeliveryState) []rivertype.JobState {
	switch s {
	case DeliveryRunning:
		return []rivertype.JobState{rivertype.JobStateRunning}
	case DeliveryRetrying:
		return []rivertype.JobState{rivertype.JobStateRetryable}
	case DeliveryDelivered:
		return []rivertype.JobState{rivertype.JobStateCompleted}
	case DeliveryDead:
		return []rivertype.JobState{rivertype.JobStateDiscarded, rivertype.JobStateCancelled}
	}
	return []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStatePending}
}

func deliveryFromJob(j *rivertype.JobRow) (*Delivery, error) {
	if j.Kind != deliveryKind {
		return nil, hub.Errorf(hub.NotFound, "webhook: job %d is not a delivery", j.ID)
	}
	var args deliveryArgs
	if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
		return nil, hub.Errorf(hub.Internal, "webhook: delivery %d: args: %w", j.ID, err)
	}
	var meta struct {
		Status   int    `json:"status"`
		Response string `json:"response"`
		Error    string `json:"error"`
		Code     string `json:"code"`
		Reason   string `json:"reason"`
	}
	_ = json.Unmarshal(j.Metadata, &meta) // absent keys stay zero
	d := &Delivery{
		ID: j.ID, EndpointID: args.EndpointID, EventID: args.EventID, EventType: args.EventType, TenantID: args.TenantID,
		State: stateOf(j.State), Attempt: j.Attempt, MaxAttempts: j.MaxAttempts,
		LastStatus: meta.Status, LastResponse: meta.Response, LastError: meta.Error, LastCode: meta.Code,
		CreatedAt: ledger.Truncate(j.CreatedAt), ScheduledAt: j.ScheduledAt, header: args.Header, body: args.Body,
	}
	if d.State == DeliveryDead {
		d.Reason = meta.Reason
		if d.Reason == "" {
			d.Reason = "exhausted"
			if j.State == rivertype.JobStateCancelled {
				d.Reason = "cancelled"
			}
		}
	}
	if j.AttemptedAt != nil {
		d.AttemptedAt = *j.AttemptedAt
	}
	if j.FinalizedAt != nil {
		d.FinalizedAt = *j.FinalizedAt
	}
	for _, e := range j.Errors {
		d.Errors = append(d.Errors, AttemptError{At: e.At, Attempt: e.Attempt, Error: e.Error})
	}
	if d.LastError == "" && len(d.Errors) > 0 {
		d.LastError = d.Errors[len(d.Errors)-1].Error
	}
	d.withAttempts(j.Metadata)
	return d, nil
}

// Delivery returns one delivery by id.
func (t *Transport) Delivery(ctx context.Context, id int64) (*Delivery, error) {
	j, err := t.l.JobGet(ctx, id)
	if err != nil {
		return nil, err
	}
	return deliveryFromJob(j)
}

// DeliveryFilter selects deliveries; zero fields do not filter.
type DeliveryFilter struct {
	EndpointID string
	EventID    string
	// TenantID selects the deliveries of this tenant's endpoints (Delivery.TenantID);
	// a tenant-scoped caller's listing runs with it, in the ledger query (a tag).
	TenantID string
	State    DeliveryState
	// Since and Until bound the delivery's creation (fan-out) time: [Since, Until), at
	// the ledger's millisecond precision (ledger.Truncate on both sides): a delivery
	// created in Since's millisecond is included, one created in Until's is not. So
	// `since := time.Now()` followed by a Send selects that Send's deliveries on both
	// stores, and consecutive ranges [a, b), [b, c) never share or lose a delivery.
	Since, Until time.Time
	// Limit caps the result; 0 = 1000.
	Limit int
}

// covers reports whether a delivery created at createdAt lies in [Since, Until), both
// bounds and the stored time compared at ledger.TimePrecision.
func (f DeliveryFilter) covers(createdAt time.Time) bool {
	at := ledger.Truncate(createdAt)
	if !f.Since.IsZero() && at.Before(ledger.Truncate(f.Since)) {
		return false
	}
	return f.Until.IsZero() || at.Before(ledger.Truncate(f.Until))
}

// listPage is the ledger page size of Deliveries.
const listPage = 500

// Deliveries lists deliveries oldest first.
func (t *Transport) Deliveries(ctx context.Context, f DeliveryFilter) ([]*Delivery, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	p := river.NewJobListParams().Kinds(deliveryKind).OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(listPage)
	if tags := filterTags(f.EndpointID, f.TenantID); len(tags) > 0 {
		p = p.TagsAll(tags...)
	}
	if f.State != "" {
		p = p.States(riverStates(f.State)...)
	}
	var out []*Delivery
	for {
		res, err := t.l.JobList(ctx, p)
		if err != nil {
			return nil, hub.Wrap(hub.Unavailable, err)
		}
		for _, j := range res.Jobs {
			if !f.covers(j.CreatedAt) {
				continue
			}
			d, err := deliveryFromJob(j)
			if err != nil {
				return nil, err
			}
			if (f.EndpointID != "" && d.EndpointID != f.EndpointID) || (f.EventID != "" && d.EventID != f.EventID) ||
				(f.TenantID != "" && d.TenantID != f.TenantID) {
				continue
			}
			out = append(out, d)
			if len(out) == limit {
				return out, nil
			}
		}
		if len(res.Jobs) < listPage || res.LastCursor == nil {
			return out, nil
		}
		p = p.After(res.LastCursor)
	}
}

// Resend makes a delivery available for one more attempt now, whatever its state
// (dead, delivered or waiting; a running one is left alone). A dead delivery that
// fails again is dead again: manual resends do not restart the retry schedule.
func (t *Transport) Resend(ctx context.Context, id int64) (*Delivery, error) {
	if _, err := t.Delivery(ctx, id); err != nil {
		return nil, err
	}
	j, err := t.l.JobRetry(ctx, id)
	if err != nil {
		return nil, err
	}
	return deliveryFromJob(j)
}

// ResendFilter selects dead deliveries to resend.
type ResendFilter struct {
	// EndpointID limits the resend to one endpoint; empty = all.
	EndpointID string
	// TenantID limits the resend to deliveries of this tenant (DeliveryFilter.TenantID).
	TenantID string
	// Since and Until bound the deliveries' creation time: [Since, Until), at
	// millisecond precision, as in DeliveryFilter.
	Since, Until time.Time
}

// maxBulkResend caps one ResendDead call (Svix caps its recover at 10 000).
const maxBulkResend = 100_000

// ResendDead resends every dead delivery matching f (bulk recovery after an outage),
// up to 100 000 per call, and returns how many it resent. The set is taken first, so a
// delivery that dies again meanwhile is not resent twice by one call.
func (t *Transport) ResendDead(ctx context.Context, f ResendFilter) (int, error) {
	dead, err := t.Deliveries(ctx, DeliveryFilter{EndpointID: f.EndpointID, TenantID: f.TenantID, State: DeliveryDead, Since: f.Since, Until: f.Until, Limit: maxBulkResend})
	if err != nil {
		return 0, err
	}
	for i, d := range dead {
		if _, err := t.l.JobRetry(ctx, d.ID); err != nil {
			return i, err
		}
	}
	return len(dead), nil
}
