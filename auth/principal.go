package auth

import (
	"context"
	"slices"

	"github.com/koder/eventhub/hub"
)

// Kind says which credential a Principal was resolved from.
type Kind string

const (
	// KindAdminToken: a token from the admin token list (env or file), operator or
	// tenant-scoped.
	KindAdminToken Kind = "admin_token"
	// KindAPIKey: a publisher API key (ehk_...).
	KindAPIKey Kind = "api_key"
	// KindJWT: a bearer JWT verified against the configured JWKS.
	KindJWT Kind = "jwt"
	// KindLink: a signed, expiring link token (ehl_...), always tenant-scoped.
	KindLink Kind = "link"
	// KindLoopback: no credential, accepted because the listener allows unauthenticated
	// loopback clients (the embedded default). An operator.
	KindLoopback Kind = "loopback"
)

// Scope is one thing a principal may do.
type Scope string

const (
	// ScopePublish: post events to the ingress.
	ScopePublish Scope = "publish"
	// ScopeRead: read the admin API (lists, gets, the audit trail).
	ScopeRead Scope = "read"
	// ScopeWrite: change things through the admin API (endpoints, resends, keys).
	ScopeWrite Scope = "write"
)

// AllScopes is what an operator holds.
var AllScopes = []Scope{ScopePublish, ScopeRead, ScopeWrite}

// Principal is who a request acts as, resolved once per request by an Authenticator
// and carried in its context. Every store query of a request is scoped by it
// server-side: a tenant-scoped principal sees its own tenant's objects only.
type Principal struct {
	// Kind is the credential type.
	Kind Kind
	// ID identifies the credential for the audit trail without revealing it: an admin
	// token's fingerprint, an API key's id, a JWT's "iss|sub", a link token's jti.
	ID string
	// Tenant pins the principal to one tenant; "" is an operator, who sees every tenant.
	Tenant string
	// Types restricts the event types the principal may publish (hub pattern syntax);
	// nil allows every type.
	Types []hub.Pattern
	// Scopes lists what the principal may do.
	Scopes []Scope
}

// Operator reports whether p is unscoped (sees and acts on every tenant).
func (p Principal) Operator() bool { return p.Tenant == "" }

// Can reports whether p holds scope s.
func (p Principal) Can(s Scope) bool { return slices.Contains(p.Scopes, s) }

// Owns reports whether p may see an object of the given tenant: an operator sees all,
// a tenant-scoped principal only its own tenant's objects (never the tenant-less ones,
// which belong to the operator).
func (p Principal) Owns(tenant string) bool { return p.Operator() || p.Tenant == tenant }

// AllowsType reports whether p may publish events of type typ.
func (p Principal) AllowsType(typ string) bool {
	if p.Types == nil {
		return true
	}
	for _, pat := range p.Types {
		if pat.Match(typ) {
			return true
		}
	}
	return false
}

// Require returns a PermissionDenied error unless p holds scope s.
func (p Principal) Require(s Scope) error {
	if p.Can(s) {
		return nil
	}
	return &DeniedError{Msg: "auth: credential " + p.ID + " lacks the " + string(s) + " scope", Anchor: "scopes"}
}

// CheckOwner is the server-side tenant check of a single object: nil when p owns it,
// NotFound otherwise. NotFound, not PermissionDenied, so a tenant cannot learn which
// object ids exist in other tenants.
func (p Principal) CheckOwner(kind, id, tenant string) error {
	if p.Owns(tenant) {
		return nil
	}
	return hub.Errorf(hub.NotFound, "%s %s not found", kind, id)
}

// CheckEvent checks that p may publish an event of this tenant and type. A wrong tenant
// is PermissionDenied naming the "tenantid" field; a type outside the principal's
// patterns is PermissionDenied naming "type".
func (p Principal) CheckEvent(tenant, typ string) error {
	if !p.Can(ScopePublish) {
		return p.Require(ScopePublish)
	}
	if !p.Owns(tenant) {
		return &DeniedError{Field: "tenantid", Anchor: "api-keys",
			Msg: "auth: credential " + p.ID + " may publish for tenant " + quote(p.Tenant) + " only, not " + quote(tenant)}
	}
	if !p.AllowsType(typ) {
		return &DeniedError{Field: "type", Anchor: "api-keys",
			Msg: "auth: credential " + p.ID + " may not publish events of type " + quote(typ)}
	}
	return nil
}

func quote(s string) string { return `"` + s + `"` }

type principalKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal of ctx and whether there is one. Handlers behind
// Middleware always find one.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
