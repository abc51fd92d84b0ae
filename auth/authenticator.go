package auth

import (
	"context"
	"net"
	"net/http"
)

// Verifier resolves one kind of credential to a principal. *KeyStore, *JWTVerifier,
// *AdminTokens and *LinkSigner implement it.
type Verifier interface {
	Verify(ctx context.Context, credential string) (Principal, error)
}

// Authenticator is the request → principal step a listener runs once per request. The
// credential comes from the Authorization header (Bearer); its shape picks the verifier:
//
//	ehk_...             API key        → Keys
//	ehl_...             link token     → Links (also from the LinkParam query parameter)
//	eyJ....(3 segments) JWT            → JWT
//	anything else       admin token    → Admin
//
// A credential whose verifier is nil is refused (an API key on the admin API, an admin
// token on the ingress). With no credential at all, AllowLoopback lets a loopback
// client in as an operator (the embedded default), and everyone else is refused.
// The ingress uses Keys and JWT; the admin API Admin and Links.
type Authenticator struct {
	Admin Verifier // admin tokens (*AdminTokens)
	Keys  Verifier // API keys (*KeyStore)
	JWT   Verifier // bearer JWTs (*JWTVerifier)
	Links Verifier // link tokens (*LinkSigner)

	// LinkParam names a query parameter that may carry a link token, for URLs handed
	// to tenants ("" = header only). Only link tokens are read from it: API keys and
	// admin tokens in URLs would end up in logs and browser history.
	LinkParam string

	// AllowLoopback: a request with no credential from a loopback address is an
	// operator (KindLoopback). For listeners bound to loopback without configured auth.
	// A request carrying a proxy header (Forwarded, X-Forwarded-For, X-Real-IP) is not
	// trusted this way: behind a reverse proxy on the same host every client would
	// otherwise look like loopback.
	AllowLoopback bool
}

// Authenticate resolves r's principal. Errors are Unauthenticated (401), or
// ResourceExhausted from the key store's lookup bound, or Unavailable when a store is
// down; write them with WriteError.
func (a *Authenticator) Authenticate(r *http.Request) (Principal, error) {
	hasHeader := len(r.Header.Values("Authorization")) > 0
	if !hasHeader && a.LinkParam != "" && a.Links != nil {
		if l := r.URL.Query().Get(a.LinkParam); l != "" {
			if !LooksLikeLink(l) {
				return Principal{}, badLink("the " + a.LinkParam + " parameter carries link tokens only")
			}
			return a.Links.Verify(r.Context(), l)
		}
	}
	if !hasHeader && a.AllowLoopback && loopbackRemote(r.RemoteAddr) && !proxied(r) {
		return Principal{Kind: KindLoopback, ID: "loopback", Scopes: AllScopes}, nil
	}
	tok, err := RequestBearer(r)
	if err != nil {
		return Principal{}, err
	}
	var v Verifier
	what := ""
	switch {
	case LooksLikeAPIKey(tok):
		v, what = a.Keys, "API keys"
	case LooksLikeLink(tok):
		v, what = a.Links, "link tokens"
	case LooksLikeJWT(tok):
		v, what = a.JWT, "JWTs"
	default:
		v, what = a.Admin, "admin tokens"
	}
	if v == nil {
		return Principal{}, unauthenticated("authentication", "auth: "+what+" are not accepted on this listener", nil)
	}
	return v.Verify(r.Context(), tok)
}

// Middleware authenticates every request, puts the principal in its context
// (FromContext) and answers failures as problem documents with a challenge naming
// realm. skip lists paths served without a credential (health probes).
func (a *Authenticator) Middleware(realm string, skip ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for _, s := range skip {
				if r.URL.Path == s {
					next.ServeHTTP(w, r)
					return
				}
			}
			p, err := a.Authenticate(r)
			if err != nil {
				WriteError(w, realm, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), p)))
		})
	}
}

// proxied reports whether r came through a proxy that said so.
func proxied(r *http.Request) bool {
	return r.Header.Get("Forwarded") != "" || r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("X-Real-Ip") != ""
}

// loopbackRemote reports whether a RemoteAddr is a loopback address.
func loopbackRemote(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var (
	_ Verifier = (*KeyStore)(nil)
	_ Verifier = (*JWTVerifier)(nil)
	_ Verifier = (*AdminTokens)(nil)
	_ Verifier = (*LinkSigner)(nil)
)
