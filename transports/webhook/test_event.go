package webhook

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Test events: "send a test event" on a console, or POST /endpoints/{id}/test, queues
// one delivery of a hub.webhook.test event to one endpoint, whatever its patterns and
// tenant, through the same ledger, signing, SSRF checks, retries and breaker as every
// delivery. A receiver is checked end to end before real events flow to it. The type
// is in the hub's own namespace, which the catch-all pattern excludes, so a test event
// never reaches another endpoint (it is not fanned out at all).

// TestEventType is the type of the events SendTest delivers.
const TestEventType = "hub.webhook.test"

// TestEventSource is their CloudEvents source.
const TestEventSource = "/eventhub/webhook"

// SendTest queues a test event for the endpoint and returns its delivery. The event
// carries the endpoint's tenant and a small payload naming the endpoint.
func (t *Transport) SendTest(ctx context.Context, endpointID string) (*Delivery, error) {
	if t.closed.Load() {
		return nil, hub.Errorf(hub.FailedPrecondition, "webhook: send after Close")
	}
	ep, err := t.st.getEndpoint(ctx, endpointID)
	if err != nil {
		return nil, err
	}
	ev := cloudevent.New(TestEventSource, TestEventType).SetSubject(ep.ID)
	if ep.TenantID != "" {
		ev.SetTenantID(ep.TenantID)
	}
	if err := ev.SetData("application/json", map[string]any{"endpoint_id": ep.ID, "test": true, "sent_at": time.Now().UTC()}); err != nil {
		return nil, hub.Wrap(hub.Internal, err)
	}
	header, body, err := t.encode(ev)
	if err != nil {
		return nil, err
	}
	res, err := t.l.Insert(ctx, deliveryArgs{EndpointID: ep.ID, EventID: ev.ID, EventType: ev.Type, TenantID: ep.TenantID, Header: header, Body: body},
		&river.InsertOpts{Queue: t.cfg.Queue, MaxAttempts: t.policy.maxAttempts(), Tags: deliveryTags(ep)})
	if err != nil {
		if hub.Code(err) != hub.Unknown {
			return nil, err
		}
		return nil, hub.Errorf(hub.Unavailable, "webhook: insert test delivery: %w", err)
	}
	return deliveryFromJob(res.Job)
}
