package auth

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/problem"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// ingressHandler stands in for the ingress behind the authenticator: it checks the
// event's tenant and type against the principal, as the ingress wiring will.
func ingressHandler(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		TenantID string `json:"tenantid"`
		Type     string `json:"type"`
	}
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p, _ := FromContext(r.Context())
	if err := p.CheckEvent(ev.TenantID, ev.Type); err != nil {
		WriteError(w, "hub-ingress", err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

type answer struct {
	status int
	prob   problem.Problem
	hdr    http.Header
}

func serve(h http.Handler, r *http.Request) answer {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	a := answer{status: rec.Code, hdr: rec.Header()}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), problem.ContentType) {
		_ = json.Unmarshal(rec.Body.Bytes(), &a.prob)
	}
	return a
}

func TestSEC_IngressAuth(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		ctx := ctxT(t)
		keys := must[*KeyStore](t)(NewKeyStore(ctx, openDB(t, b), KeyStoreConfig{}))
		_, keyA, _ := keys.Create(ctx, KeySpec{Tenant: "tenant-a", Types: []string{"billing.#"}})
		revoked, keyRevoked, _ := keys.Create(ctx, KeySpec{Tenant: "tenant-a"})
		if _, err := keys.Revoke(ctx, KeyRef{ID: revoked.ID}); err != nil {
			t.Fatal(err)
		}
		i := newIDP(t)
		jv, _ := newVerifier(t, i, nil)
		now := time.Now()
		hdr := map[string]any{"kid": "rsa1"}
		goodJWT := sign(t, jwt.SigningMethodRS256, i.rsa, hdr, i.claims(now, func(c jwt.MapClaims) { c["tenant_id"] = "tenant-a" }))
		jwtWith := func(mod func(jwt.MapClaims)) string {
			return sign(t, jwt.SigningMethodRS256, i.rsa, hdr, i.claims(now, func(c jwt.MapClaims) { c["tenant_id"] = "tenant-a"; mod(c) }))
		}

		a := &Authenticator{Keys: keys, JWT: jv}
		h := a.Middleware("hub-ingress")(http.HandlerFunc(ingressHandler))
		open := (&Authenticator{Keys: keys, JWT: jv, AllowLoopback: true}).Middleware("hub-ingress")(http.HandlerFunc(ingressHandler))

		cases := []struct {
			name   string
			h      http.Handler
			auth   string
			remote string
			tenant string
			typ    string
			status int
			field  string
		}{
			{"NoKey", h, "", "", "tenant-a", "billing.paid", 401, ""},
			{"UnknownKey", h, "Bearer " + newAPIKey(newKeyID()).String(), "", "tenant-a", "billing.paid", 401, ""},
			{"MalformedKey", h, "Bearer ehk_short", "", "tenant-a", "billing.paid", 401, ""},
			{"RevokedKey", h, "Bearer " + keyRevoked, "", "tenant-a", "billing.paid", 401, ""},
			{"KeyOfTenantAPostingTenantB", h, "Bearer " + keyA, "", "tenant-b", "billing.paid", 403, "tenantid"},
			{"KeyTypeOutsideItsPatterns", h, "Bearer " + keyA, "", "tenant-a", "user.created", 403, "type"},
			{"JWTBadSignature", h, "Bearer " + sign(t, jwt.SigningMethodRS256, rsaKey(1), hdr, i.claims(now, nil)), "", "tenant-a", "billing.paid", 401, ""},
			{"JWTWrongAudience", h, "Bearer " + jwtWith(func(c jwt.MapClaims) { c["aud"] = "someone-else" }), "", "tenant-a", "billing.paid", 401, ""},
			{"JWTExpired", h, "Bearer " + jwtWith(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() }), "", "tenant-a", "billing.paid", 401, ""},
			{"JWTMissingTenantClaim", h, "Bearer " + jwtWith(func(c jwt.MapClaims) { delete(c, "tenant_id") }), "", "tenant-a", "billing.paid", 401, ""},
			{"JWTOfTenantAPostingTenantB", h, "Bearer " + goodJWT, "", "tenant-b", "billing.paid", 403, "tenantid"},
			{"AdminTokenIsNotAPublisherCredential", h, "Bearer admin-token-0123456789abcdef", "", "tenant-a", "billing.paid", 401, ""},
			{"GoodKey", h, "Bearer " + keyA, "", "tenant-a", "billing.invoice.paid", 202, ""},
			{"GoodJWT", h, "Bearer " + goodJWT, "", "tenant-a", "user.created", 202, ""},
			{"LoopbackWithoutKeyOnTheEmbeddedDefault", open, "", "127.0.0.1:5000", "any-tenant", "user.created", 202, ""},
			{"RemoteWithoutKeyOnTheEmbeddedDefault", open, "", "10.1.2.3:5000", "any-tenant", "user.created", 401, ""},
			{"LoopbackWithABadKeyIsStillRefused", open, "Bearer " + keyRevoked, "127.0.0.1:5000", "tenant-a", "billing.paid", 401, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				body, _ := json.Marshal(map[string]string{"tenantid": tc.tenant, "type": tc.typ})
				r := httptest.NewRequest("POST", "/events", bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/cloudevents+json")
				if tc.auth != "" {
					r.Header.Set("Authorization", tc.auth)
				}
				if tc.remote != "" {
					r.RemoteAddr = tc.remote
				}
				got := serve(tc.h, r)
				if got.status != tc.status {
					t.Fatalf("status %d (%+v), want %d", got.status, got.prob, tc.status)
				}
				if tc.status >= 400 {
					if got.prob.Status != tc.status || got.prob.Detail == "" || !strings.HasPrefix(got.prob.Type, problem.TypeBase) {
						t.Fatalf("problem %+v", got.prob)
					}
					if got.prob.Field != tc.field {
						t.Fatalf("problem field %q, want %q", got.prob.Field, tc.field)
					}
				}
				if tc.status == 401 && !strings.HasPrefix(got.hdr.Get("WWW-Authenticate"), `Bearer realm="hub-ingress"`) {
					t.Fatalf("401 without a challenge: %v", got.hdr)
				}
			})
		}
	})
}

func TestSEC_AdminAuth(t *testing.T) {
	t.Parallel()
	op, ro, acme := GenerateAdminToken(), GenerateAdminToken(), GenerateAdminToken()
	tokens, err := ParseAdminTokens(op+"\n"+ro+" scopes=read\n"+acme+" tenant=acme\n", "tokens")
	if err != nil {
		t.Fatal(err)
	}
	links := must[*LinkSigner](t)(NewLinkSigner(bytes.Repeat([]byte{9}, 32)))
	link, _, _ := links.Issue("acme", nil, time.Hour)
	a := &Authenticator{Admin: tokens, Links: links, LinkParam: "link", AllowLoopback: true}
	// The handler answers with the principal, or refuses writes without the scope.
	h := a.Middleware("hub-admin", "/healthz")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := FromContext(r.Context())
		if r.URL.Path == "/healthz" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if !ok {
			t.Error("no principal in the context")
		}
		if r.Method == http.MethodPost {
			if err := p.Require(ScopeWrite); err != nil {
				WriteError(w, "hub-admin", err)
				return
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"kind": string(p.Kind), "tenant": p.Tenant})
	}))
	for _, tc := range []struct {
		name, method, target, auth, remote string
		status                             int
		kind, tenant                       string
	}{
		{"Operator", "GET", "/endpoints", "Bearer " + op, "10.0.0.1:1", 200, "admin_token", ""},
		{"TenantToken", "GET", "/endpoints", "Bearer " + acme, "10.0.0.1:1", 200, "admin_token", "acme"},
		{"ReadOnlyTokenCannotWrite", "POST", "/endpoints", "Bearer " + ro, "10.0.0.1:1", 403, "", ""},
		{"LinkInTheHeader", "GET", "/endpoints", "Bearer " + link, "10.0.0.1:1", 200, "link", "acme"},
		{"LinkInTheQuery", "GET", "/endpoints?link=" + link, "", "10.0.0.1:1", 200, "link", "acme"},
		{"LinkCannotWrite", "POST", "/endpoints?link=" + link, "", "10.0.0.1:1", 403, "", ""},
		{"AdminTokenInTheQueryIsIgnored", "GET", "/endpoints?link=" + op, "", "10.0.0.1:1", 401, "", ""},
		{"APIKeyOnTheAdminAPI", "GET", "/endpoints", "Bearer " + newAPIKey(newKeyID()).String(), "10.0.0.1:1", 401, "", ""},
		{"WrongToken", "GET", "/endpoints", "Bearer " + GenerateAdminToken(), "127.0.0.1:1", 401, "", ""},
		{"LoopbackOperator", "GET", "/endpoints", "", "127.0.0.1:1", 200, "loopback", ""},
		{"LoopbackIPv6", "POST", "/endpoints", "", "[::1]:1", 200, "loopback", ""},
		{"RemoteWithoutToken", "GET", "/endpoints", "", "192.168.1.2:1", 401, "", ""},
		{"HealthNeedsNothing", "GET", "/healthz", "", "192.168.1.2:1", 204, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.target, nil)
			r.RemoteAddr = tc.remote
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tc.status {
				t.Fatalf("status %d %s, want %d", rec.Code, rec.Body, tc.status)
			}
			if tc.status == 200 {
				var got map[string]string
				_ = json.Unmarshal(rec.Body.Bytes(), &got)
				if got["kind"] != tc.kind || got["tenant"] != tc.tenant {
					t.Fatalf("principal %v, want %s/%s", got, tc.kind, tc.tenant)
				}
			}
		})
	}
}

// A reverse proxy on the same host makes every client look like loopback: a request
// that says it was forwarded is never trusted as a loopback operator.
func TestSEC_LoopbackBehindAProxy(t *testing.T) {
	t.Parallel()
	a := &Authenticator{AllowLoopback: true}
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Real-IP"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "127.0.0.1:4000"
		r.Header.Set(h, "203.0.113.7")
		_, err := a.Authenticate(r)
		wantCode(t, err, hub.Unauthenticated)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:4000"
	if p, err := a.Authenticate(r); err != nil || p.Kind != KindLoopback || !p.Operator() {
		t.Fatalf("%+v %v", p, err)
	}
}
