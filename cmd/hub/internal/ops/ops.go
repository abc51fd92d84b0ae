// Package ops is the contract between the admin API and the modules: the operations a
// module offers (DLQ, status, webhook endpoints and deliveries, the outbox) as small
// interfaces found by type assertion. Values returned are JSON-encoded as they are;
// errors carry hub codes (NotFound becomes 404, InvalidArgument 400).
package ops

import (
	"context"
	"encoding/json"
	"net/url"
)

// Statuser reports a transport's state for GET /transports: lag, pending counts,
// breaker states, whatever the library exposes.
type Statuser interface {
	Status(ctx context.Context) (any, error)
}

// DLQ is a transport's dead-letter store (W3): list, inspect, replay, purge.
type DLQ interface {
	List(ctx context.Context, limit int) (any, error)
	Inspect(ctx context.Context, id string) (any, error)
	// Replay moves entries back to their source for a new delivery; all means every
	// entry. It returns how many moved.
	Replay(ctx context.Context, ids []string, all bool) (int, error)
	Purge(ctx context.Context, ids []string, all bool) (int, error)
}

// DLQProvider is implemented by transport modules that have a DLQ.
type DLQProvider interface {
	DLQ() DLQ
}

// Endpoints manages webhook endpoints.
type Endpoints interface {
	List(ctx context.Context) (any, error)
	Get(ctx context.Context, id string) (any, error)
	Create(ctx context.Context, body json.RawMessage) (any, error)
	Update(ctx context.Context, id string, body json.RawMessage) (any, error)
	Delete(ctx context.Context, id string) error
	Rotate(ctx context.Context, id string, body json.RawMessage) (any, error)
}

// Deliveries manages webhook deliveries.
type Deliveries interface {
	List(ctx context.Context, q url.Values) (any, error)
	Get(ctx context.Context, id string) (any, error)
	// Resend delivers again: the ids, or every dead delivery of an endpoint in a range.
	Resend(ctx context.Context, body json.RawMessage) (any, error)
}

// WebhookProvider is implemented by the webhook transport module.
type WebhookProvider interface {
	Endpoints() Endpoints
	Deliveries() Deliveries
}

// Outbox is the transactional outbox's operations.
type Outbox interface {
	Counts(ctx context.Context) (any, error)
	Dead(ctx context.Context, destination string, limit int) (any, error)
	Resend(ctx context.Context, body json.RawMessage) (any, error)
}
