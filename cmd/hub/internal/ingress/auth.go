package ingress

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Realm names the ingress in WWW-Authenticate challenges.
const Realm = "hub-ingress"

// Access is the ingress's access layer (docs/security.md), in two steps around the
// handler:
//
//   - Middleware, before the body is read: the concurrency bound (503), the Host and
//     cross-site checks of the request guard (403), and authentication (401), which
//     puts the caller's principal in the request context.
//   - Authorize, once the events parse (Handler.Authorize): every event's tenantid and
//     type against the principal (403 naming the field), then the rate limits,
//     charged one token per event (429 with Retry-After).
//
// The write media type is not the guard's business here: the handler accepts the
// CloudEvents types, which a browser cannot send across sites without a preflight, and
// binary mode, whose ce- headers need one too.
type Access struct {
	// Guard checks Host and the request's site; nil: no check.
	Guard *auth.Guard
	// Authenticator resolves the caller; nil: no credential is asked for, and no
	// principal is set (Authorize then lets every event through).
	Authenticator *auth.Authenticator
	// Limits are the per-key and per-tenant rates; nil: none.
	Limits *auth.RateLimiter
	// Concurrency bounds requests served at once; nil: none.
	Concurrency *auth.ConcurrencyLimiter
}

// Middleware returns next behind the concurrency bound, the guard and authentication.
func (a *Access) Middleware(next http.Handler) http.Handler {
	h := next
	if a.Authenticator != nil {
		h = a.Authenticator.Middleware(Realm)(h)
	}
	if g := a.Guard; g != nil {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			err := g.CheckHost(r)
			if err == nil {
				err = g.CheckSite(r)
			}
			if err != nil {
				WriteAccessError(w, err)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	if a.Concurrency != nil {
		h = a.Concurrency.Middleware(h)
	}
	return h
}

// Authorize checks each event against the principal in ctx (its tenant and type
// patterns), then charges the batch to the principal's rate limits. The first refused
// event names its position in a batch.
func (a *Access) Authorize(ctx context.Context, evs []*cloudevent.Event) error {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil
	}
	for i, ev := range evs {
		if err := p.CheckEvent(ev.TenantID(), ev.Type); err != nil {
			if len(evs) > 1 {
				return atIndex(err, i)
			}
			return err
		}
	}
	return a.Limits.AllowN(p, len(evs))
}

// WriteAccessError answers an error of the access layer as a problem document, with
// WWW-Authenticate on 401 and Retry-After on 429 and 503.
func WriteAccessError(w http.ResponseWriter, err error) { auth.WriteError(w, Realm, err) }

// indexedDenied is a refusal of one event of a batch: the field is pointed to in the
// body ("/2/tenantid"), as the ingress's other problems are.
type indexedDenied struct {
	index int
	err   *auth.DeniedError
}

func atIndex(err error, i int) error {
	var de *auth.DeniedError
	if !errors.As(err, &de) {
		return err
	}
	return &indexedDenied{index: i, err: de}
}

func (e *indexedDenied) Error() string {
	return "event " + strconv.Itoa(e.index) + " of the batch: " + e.err.Error()
}
func (e *indexedDenied) Unwrap() error         { return e.err }
func (e *indexedDenied) HubCode() int          { return int(hub.PermissionDenied) }
func (e *indexedDenied) ProblemAnchor() string { return e.err.ProblemAnchor() }
func (e *indexedDenied) ProblemField() string {
	if e.err.Field == "" {
		return ""
	}
	return "/" + strconv.Itoa(e.index) + "/" + e.err.Field
}
