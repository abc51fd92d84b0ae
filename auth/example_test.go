package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// openLedger opens an embedded SQLite ledger in a temporary directory.
func openLedger() (*ledger.Ledger, func()) {
	dir, _ := os.MkdirTemp("", "auth-example")
	l, err := ledger.Open(context.Background(), ledger.Config{DSN: "sqlite://" + filepath.Join(dir, "hub.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	return l, func() { l.Close(); os.RemoveAll(dir) }
}

// API keys live in the ledger's database. The key is shown once; the store keeps its
// hash.
func ExampleKeyStore() {
	ctx := context.Background()
	l, done := openLedger()
	defer done()
	keys, err := auth.NewKeyStore(ctx, l.DB(), auth.KeyStoreConfig{})
	if err != nil {
		panic(err)
	}
	meta, key, _ := keys.Create(ctx, auth.KeySpec{Tenant: "acme", Name: "billing", Types: []string{"billing.#"}})
	fmt.Println(strings.HasPrefix(key, meta.Prefix), len(key) == auth.APIKeyLen)

	p, _ := keys.Verify(ctx, key)
	fmt.Println(p.Tenant, p.CheckEvent("acme", "billing.invoice.paid"))
	var denied *auth.DeniedError
	if errors.As(p.CheckEvent("globex", "billing.invoice.paid"), &denied) {
		fmt.Println(hub.Code(denied), denied.Field)
	}

	_, _ = keys.Revoke(ctx, auth.KeyRef{ID: meta.ID})
	_, err = keys.Verify(ctx, key)
	fmt.Println(hub.Code(err))
	// Output:
	// true true
	// acme <nil>
	// PermissionDenied tenantid
	// Unauthenticated
}

// An admin API: admin tokens and link tokens, behind the request guard.
func ExampleAuthenticator() {
	tokens, _ := auth.ParseAdminTokens("operator-token-0123456789\nacme-token-0123456789 tenant=acme\n", "tokens")
	a := &auth.Authenticator{Admin: tokens}
	guard, _ := auth.NewGuard(auth.GuardConfig{ListenAddr: "127.0.0.1:8081"})
	h := guard.Middleware(a.Middleware("hub-admin", "/healthz")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.FromContext(r.Context())
		fmt.Fprintf(w, "%s tenant=%q operator=%v", p.Kind, p.Tenant, p.Operator())
	})))
	for _, tok := range []string{"operator-token-0123456789", "acme-token-0123456789", "wrong-token-0123456789"} {
		r := httptest.NewRequest("GET", "http://127.0.0.1:8081/endpoints", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	}
	// Output:
	// 200 admin_token tenant="" operator=true
	// 200 admin_token tenant="acme" operator=false
	// 401 {"type":"https://github.com/koder/eventhub/blob/main/docs/security.md#admin-tokens","title":"Unauthorized","status":401,"detail":"auth: unknown admin token"}
}

// The guard refuses a DNS rebinding request (the attacker's name in Host) and a
// cross-site form post before any handler runs.
func ExampleNewGuard() {
	g, _ := auth.NewGuard(auth.GuardConfig{ListenAddr: "127.0.0.1:8081", Hosts: []string{"hub.example.com"}})
	rebind := httptest.NewRequest("GET", "http://rebind.attacker.test:8081/endpoints", nil)
	form := httptest.NewRequest("POST", "http://127.0.0.1:8081/endpoints", strings.NewReader("url=http://x"))
	form.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	form.Header.Set("Origin", "https://attacker.test")
	own := httptest.NewRequest("GET", "http://hub.example.com/endpoints", nil)
	for _, r := range []*http.Request{rebind, form, own} {
		fmt.Println(g.Check(r))
	}
	// Output:
	// auth: Host "rebind.attacker.test:8081" is not a name of this listener (DNS rebinding?)
	// auth: cross-origin request from "https://attacker.test" refused
	// <nil>
}

// A link for a tenant's portal: signed by the hub, expiring, scoped to one tenant.
func ExampleLinkSigner() {
	key := make([]byte, 32) // in production: secrets.Keyring.DeriveKeys("link-tokens")
	_, _ = rand.Read(key)
	s, _ := auth.NewLinkSigner(key)
	link, _, _ := s.Issue("acme", []auth.Scope{auth.ScopeRead}, time.Hour)
	p, err := s.Verify(context.Background(), link)
	fmt.Println(strings.HasPrefix(link, auth.LinkPrefix), p.Kind, p.Tenant, p.Can(auth.ScopeRead), p.Can(auth.ScopeWrite), err)
	_, err = s.Verify(context.Background(), link[:len(link)-2]+"xx")
	fmt.Println(hub.Code(err))
	// Output:
	// true link acme true false <nil>
	// Unauthenticated
}

// Tokens from the environment and a file; each is known by its id.
func ExampleLoadAdminTokens() {
	tok := "operator-token-0123456789"
	set, _ := auth.LoadAdminTokens(tok, "")
	p, _ := set.Verify(context.Background(), tok)
	fmt.Println(p.ID == auth.AdminTokenID(tok), len(p.ID), p.Operator())
	// Output: true 8 true
}

// Bearer JWTs from an identity provider, checked against its JWKS.
func ExampleNewJWTVerifier() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwk, _ := jwkset.NewJWKFromKey(&key.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "k1", ALG: jwkset.AlgES256}})
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{jwk.Marshal()}})
	}))
	defer idp.Close()

	v, err := auth.NewJWTVerifier(context.Background(), auth.JWTConfig{
		JWKSURL: idp.URL, Issuer: "https://idp.example", Audience: "eventhub", TenantClaim: "tenant_id",
	})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": "https://idp.example", "aud": "eventhub",
		"sub": "billing-service", "tenant_id": "acme", "exp": time.Now().Add(time.Hour).Unix()})
	tok.Header["kid"] = "k1"
	signed, _ := tok.SignedString(key)
	p, err := v.Verify(context.Background(), signed)
	fmt.Println(p.Kind, p.ID, p.Tenant, err)
	// Output: jwt billing-service acme <nil>
}

// Per-key and per-tenant token buckets; the error carries the Retry-After.
func ExampleRateLimiter() {
	l, _ := auth.NewRateLimiter(auth.RateLimitConfig{PerKey: 10, KeyBurst: 20, PerTenant: 50, TenantBurst: 100})
	p := auth.Principal{Kind: auth.KindAPIKey, ID: "k1", Tenant: "acme"}
	fmt.Println(l.AllowN(p, 20))
	var rl *auth.RateLimitError
	if errors.As(l.Allow(p), &rl) {
		fmt.Println(hub.Code(rl), auth.RetryAfterSeconds(rl.RetryAfter))
	}
	// Output:
	// <nil>
	// ResourceExhausted 1
}

// Admin actions go to slog and to the audit table.
func ExampleAuditLog() {
	ctx := context.Background()
	l, done := openLedger()
	defer done()
	store, _ := auth.NewAuditStore(ctx, l.DB())
	log := &auth.AuditLog{Logger: slog.New(slog.DiscardHandler), Store: store}
	ctx = auth.NewContext(ctx, auth.Principal{Kind: auth.KindAdminToken, ID: "1a2b3c4d", Scopes: auth.AllScopes})
	_ = log.Action(ctx, "endpoint.delete", "endpoint/ep_1", "acme", nil)
	recs, _, _ := store.List(ctx, auth.AuditQuery{Tenant: "acme"})
	fmt.Println(len(recs), recs[0].ActorID, recs[0].Action, recs[0].Object, recs[0].Outcome)
	// Output: 1 1a2b3c4d endpoint.delete endpoint/ep_1 ok
}

// A listener whose certificate files are replaced in place keeps serving, and fresh
// connections get the new certificate.
func ExampleNewCertReloader() {
	c, err := auth.NewCertReloader("tls.crt", "tls.key", 0, nil)
	if err != nil {
		fmt.Println(hub.Code(err))
		return
	}
	srv := auth.Harden(&http.Server{Addr: ":8443", TLSConfig: c.TLSConfig()})
	_ = srv.ListenAndServeTLS("", "")
	// Output: InvalidArgument
}

// Validate a JWT configuration as the verifier will use it, without fetching the key
// set (what `hub lint` does with the auth.jwt section).
func ExampleJWTConfig_WithDefaults() {
	cfg := auth.JWTConfig{JWKSURL: "https://idp.example.com/.well-known/jwks.json", Issuer: "https://idp.example.com/", Audience: "eventhub"}
	c := cfg.WithDefaults()
	fmt.Println(c.TenantClaim, c.ClockSkew, c.Validate())
	// Output: tenant_id 30s <nil>
}
