package admin

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/koder/eventhub/auth"
)

// Realm names the admin API in WWW-Authenticate challenges.
const Realm = "hub-admin"

// LinkParam is the query parameter that may carry a link token (?link=ehl_...), for
// URLs handed to a tenant. Only link tokens are read from it.
const LinkParam = "link"

// Access is the admin API's access layer (docs/security.md). Every request passes, in
// order: the concurrency bound (503), the request guard (Host allow-list against DNS
// rebinding, cross-site refusal, application/json for writes with a body: 403 or 415),
// authentication (401), and authorization: GET needs the read scope, anything else
// write, and the operator-only paths refuse tenant-scoped callers (403). Handlers then
// scope every query by the caller's tenant (scopedTenant) and audit every change.
type Access struct {
	// Tokens are the admin tokens (operators, or scoped to a tenant or to reading).
	// With none, no credential is asked for: loopback clients are operators and every
	// other client is refused, /healthz included.
	Tokens *auth.AdminTokens
	// Links verifies link tokens (Authorization: Bearer ehl_..., or ?link=) and signs the
	// ones POST /links issues; nil: none.
	Links *auth.LinkSigner
	// Guard is the request guard; nil: loopback names and the connection's own address
	// only, no other origin.
	Guard *auth.Guard
	// Concurrency bounds the requests served at once; nil: none.
	Concurrency *auth.ConcurrencyLimiter
	// LinkTTL is the life of a link POST /links issues without a ttl (0: 24h).
	LinkTTL time.Duration
	// Revocations lists the links DELETE /links/{id} revoked (Links checks it); nil:
	// links cannot be revoked one by one (no store).
	Revocations *auth.LinkRevocations
}

// probes are served without a credential when tokens are configured (orchestrators'
// health checks carry none).
var probes = []string{"/healthz", "/readyz"}

// operatorOnly are the paths a tenant-scoped caller may not use: they show or change
// what every tenant shares (routes, transports, the outbox, metrics, secrets at rest)
// or hand out credentials for any tenant (links).
var operatorOnly = []string{"/routes", "/transports", "/outbox", "/metrics", "/secrets", "/links"}

// protect wraps the routes in the access layer.
func (s *Server) protect(mux http.Handler) http.Handler {
	g := s.Guard
	if g == nil {
		g, _ = auth.NewGuard(auth.GuardConfig{}) // the zero config is valid
	}
	// Verifiers are set only when present: a typed nil in the interface would be called.
	authn := &auth.Authenticator{AllowLoopback: s.Tokens.Len() == 0}
	if s.Tokens != nil {
		authn.Admin = s.Tokens
	}
	if s.Links != nil {
		authn.Links, authn.LinkParam = s.Links, LinkParam
	}
	h := s.authorize(mux)
	h = authn.Middleware(Realm, probes...)(h)
	h = s.loopbackOnly(h)
	h = g.Middleware(h)
	if s.Concurrency != nil {
		h = s.Concurrency.Middleware(h)
	}
	return h
}

// loopbackOnly keeps the rule of an API without admin tokens: only loopback clients are
// answered, probes included, and everyone else gets 403 (not 401: no credential would
// help). A link token is still checked, from anywhere.
func (s *Server) loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Tokens.Len() == 0 && !loopbackClient(r.RemoteAddr) && !presentsCredential(r) {
			writeErr(w, &auth.DeniedError{Anchor: "admin-tokens", Msg: "the admin API has no token configured and answers loopback clients only"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func presentsCredential(r *http.Request) bool {
	return len(r.Header.Values("Authorization")) > 0 || r.URL.Query().Get(LinkParam) != ""
}

// authorize checks the caller's scope for the method and refuses operator-only paths to
// tenant-scoped callers; every refusal is audited.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.FromContext(r.Context())
		if !ok { // a probe served without a credential
			next.ServeHTTP(w, r)
			return
		}
		need := auth.ScopeWrite
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			need = auth.ScopeRead
		}
		err := p.Require(need)
		if err == nil && !p.Operator() && isOperatorOnly(r.URL.Path) {
			err = &auth.DeniedError{Anchor: "principals-and-tenant-scoping",
				Msg: "auth: " + r.URL.Path + " is for operators; credential " + p.ID + " is scoped to tenant " + p.Tenant}
		}
		if err != nil {
			_ = s.audit().Action(r.Context(), "request", r.Method+" "+r.URL.Path, "", err)
			writeErr(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isOperatorOnly(path string) bool {
	for _, p := range operatorOnly {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// scopedTenant is the tenant every query of the request is pinned to: the caller's, or
// "" for an operator (every tenant).
func scopedTenant(ctx context.Context) string {
	p, _ := auth.FromContext(ctx)
	if p.Operator() {
		return ""
	}
	return p.Tenant
}

// ownTenant resolves the tenant of an object a caller creates or moves: a tenant-scoped
// caller may name its own tenant only (none given: its own); an operator any.
func ownTenant(ctx context.Context, field string, asked *string) (*string, error) {
	p, _ := auth.FromContext(ctx)
	if p.Operator() {
		return asked, nil
	}
	if asked != nil && *asked != p.Tenant {
		return nil, &auth.DeniedError{Field: field, Anchor: "principals-and-tenant-scoping",
			Msg: "auth: credential " + p.ID + " may act for tenant \"" + p.Tenant + "\" only"}
	}
	t := p.Tenant
	return &t, nil
}

// checkOwner is the single-object tenant check: NotFound for another tenant's object,
// so ids of other tenants cannot be probed.
func checkOwner(ctx context.Context, kind, id, tenant string) error {
	p, _ := auth.FromContext(ctx)
	return p.CheckOwner(kind, id, tenant)
}

// audit returns the audit log (slog only when the server has none).
func (s *Server) audit() *auth.AuditLog {
	if s.Audit != nil {
		return s.Audit
	}
	return &auth.AuditLog{Logger: s.logger()}
}

// done audits an action and answers it: v with status on success, the problem of err
// otherwise. When the action succeeded and only its audit row failed, the answer is
// still the success (the slog record exists, and a client retrying would repeat a change
// that was made); the failure is logged.
func (s *Server) done(w http.ResponseWriter, r *http.Request, action, object, tenant string, status int, v any, err error) {
	if aerr := s.audit().Action(r.Context(), action, object, tenant, err); err == nil && aerr != nil {
		s.logger().Warn("admin: audit row not stored", "action", action, "object", object, "error", aerr)
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, v)
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func loopbackClient(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
