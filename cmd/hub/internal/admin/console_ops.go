package admin

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/rabbitmq"
	"github.com/koder/eventhub/transports/webhook"
)

// The operations the web console (cmd/hub/internal/ui) shares with the API: the same
// tenant scoping, the same DLQ operations, the same audit trail. The console renders
// HTML where the API encodes JSON; what each caller may see and do is decided here,
// once, by the request's principal.

// ScopedTenant is the tenant every query of the request is pinned to: the caller's,
// or "" for an operator.
func ScopedTenant(ctx context.Context) string { return scopedTenant(ctx) }

// OwnTenant resolves the tenant of an object the caller creates or moves (see
// ownTenant).
func OwnTenant(ctx context.Context, field string, asked *string) (*string, error) {
	return ownTenant(ctx, field, asked)
}

// CheckOwner is the single-object tenant check: NotFound for another tenant's object.
func CheckOwner(ctx context.Context, kind, id, tenant string) error {
	return checkOwner(ctx, kind, id, tenant)
}

// AuditAction records an action of the request's principal (an error is the refusal
// or failure), as every API change is recorded.
func (s *Server) AuditAction(r *http.Request, action, object, tenant string, err error) {
	if aerr := s.audit().Action(r.Context(), action, object, tenant, err); err == nil && aerr != nil {
		s.logger().Warn("admin: audit row not stored", "action", action, "object", object, "error", aerr)
	}
}

// Webhook returns the webhook transport, nil when none is configured.
func (s *Server) Webhook() *webhook.Transport {
	for _, t := range s.Transports {
		if p, ok := t.Module.(ops.WebhookProvider); ok && p.Webhook() != nil {
			return p.Webhook()
		}
	}
	return nil
}

// DLQNames lists the transports and sources that have a dead-letter store, in config
// order (transports first).
func (s *Server) DLQNames() []Transport {
	var out []Transport
	for _, t := range append(append([]Transport{}, s.Transports...), s.Sources...) {
		if _, ok := t.Module.(ops.DLQProvider); ok {
			out = append(out, t)
		}
	}
	return out
}

// DLQ is one dead-letter store's operations as the request's principal may use them
// (a tenant sees its own entries only; RabbitMQ queues are for operators).
type DLQ struct{ o dlqOps }

// DLQPage is one page of a dead-letter store.
type DLQPage struct {
	// Entries are redisstream.DeadLetter, kdbstream.DeadLetter or rabbitmq.DeadLetter.
	Entries []any
	Stream  string
	Total   int64
}

// DLQ returns the named transport's or source's DLQ for the request.
func (s *Server) DLQ(ctx context.Context, name string) (DLQ, error) {
	t, ok := s.transport(name)
	if !ok {
		return DLQ{}, hub.Errorf(hub.NotFound, "no transport named %s", name)
	}
	if p, ok := t.Module.(ops.DLQProvider); ok {
		if d, ok := opsFor(p.DLQ(), scopedTenant(ctx)); ok {
			return DLQ{o: d}, nil
		}
	}
	return DLQ{}, hub.Errorf(hub.NotFound, "transport %s (%s) has no DLQ", name, t.Type)
}

// List returns the entries after the cursor ("" from the oldest), at most limit.
func (d DLQ) List(ctx context.Context, after string, limit int) (DLQPage, error) {
	v, err := d.o.list(ctx, after, limit)
	if err != nil {
		return DLQPage{}, err
	}
	switch p := v.(type) {
	case dlqPage[streams.DeadLetter]: // the Redis and kdbstream DLQs'
		return DLQPage{Entries: anys(p.Entries), Stream: p.Stream, Total: p.Total}, nil
	case []rabbitmq.DeadLetter:
		return DLQPage{Entries: anys(p), Total: int64(len(p))}, nil
	}
	return DLQPage{}, hub.Errorf(hub.Internal, "admin: unknown DLQ page %T", v)
}

// Get returns one entry (a value or pointer of the library's DeadLetter type).
func (d DLQ) Get(ctx context.Context, id string) (any, error) { return d.o.get(ctx, id) }

// Replay sends entries back to their source; ReplayAll every entry.
func (d DLQ) Replay(ctx context.Context, ids []string) (int, error) { return d.o.replay(ctx, ids) }

// ReplayAll replays every entry the caller may see.
func (d DLQ) ReplayAll(ctx context.Context) (int, error) { return d.o.replayAll(ctx) }

// Purge deletes entries (none given: every entry the caller may see).
func (d DLQ) Purge(ctx context.Context, ids []string) (int, error) { return d.o.purge(ctx, ids) }

func anys[E any](in []E) []any {
	out := make([]any, len(in))
	for i, e := range in {
		out[i] = e
	}
	return out
}

// ParseDeliveryQuery reads a delivery listing's filter from query or form values:
// state (pending, running, retrying, delivered, dead), endpoint, type (an exact type or
// a pattern), event, tenant, since and until (RFC 3339), before (the keyset cursor) and
// limit. The tenant given is a filter for operators; a tenant-scoped caller's own
// tenant replaces it (ScopedTenant), so it can never widen what the caller sees.
func ParseDeliveryQuery(ctx context.Context, q url.Values) (webhook.DeliveryQuery, error) {
	dq := webhook.DeliveryQuery{Type: q.Get("type")}
	dq.EndpointID, dq.EventID, dq.TenantID = q.Get("endpoint"), q.Get("event"), q.Get("tenant")
	switch st := webhook.DeliveryState(q.Get("state")); st {
	case "", webhook.DeliveryPending, webhook.DeliveryRunning, webhook.DeliveryRetrying, webhook.DeliveryDelivered, webhook.DeliveryDead:
		dq.State = st
	default:
		return dq, hub.Errorf(hub.InvalidArgument, "state %q: pending, running, retrying, delivered or dead", st)
	}
	var err error
	if dq.Since, err = parseTime(q.Get("since")); err != nil {
		return dq, err
	}
	if dq.Until, err = parseTime(q.Get("until")); err != nil {
		return dq, err
	}
	if b := q.Get("before"); b != "" {
		if dq.Before, err = strconv.ParseInt(b, 10, 64); err != nil || dq.Before < 0 {
			return dq, hub.Errorf(hub.InvalidArgument, "before %q: want a delivery id", b)
		}
	}
	if l := q.Get("limit"); l != "" {
		if dq.Limit, err = strconv.Atoi(l); err != nil || dq.Limit < 0 {
			return dq, hub.Errorf(hub.InvalidArgument, "limit %q: want a positive number", l)
		}
	}
	if t := scopedTenant(ctx); t != "" {
		dq.TenantID = t
	}
	return dq, nil
}
