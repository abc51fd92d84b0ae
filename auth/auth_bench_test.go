package auth

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/koder/eventhub/ledger"
)

// The benchmarks measure what authentication adds to one published event: each "hub"
// sub-benchmark sends a one-event POST through Authenticator.Middleware to a handler
// that decodes the event and checks it against the principal (what the ingress will
// do), and its "base_noauth" sibling sends the same request to the same handler with no
// middleware. Requests go through httptest.NewRecorder, not a socket, so the ratio is
// the CPU cost of the check itself; against the real ingress (tens of microseconds per
// event, see docs/BENCHMARKS.md) it is a far smaller share.

var benchEvent = []byte(`{"specversion":"1.0","id":"evt_01JBENCH0000000000000000","source":"/bench","type":"billing.invoice.paid","tenantid":"acme","data":{"invoice_id":"inv_1","amount":1200}}`)

func benchServe(b *testing.B, h http.Handler, auth string) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/events", bytes.NewReader(benchEvent))
		r.Header.Set("Content-Type", "application/cloudevents+json")
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusAccepted {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// baseline is the same handler without authentication: every request is an operator.
func baseline() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ingressHandler(w, r.WithContext(NewContext(r.Context(), Principal{Kind: KindLoopback, ID: "loopback", Scopes: AllScopes})))
	})
}

func benchKeys(b *testing.B, backend ledger.Backend, cfg KeyStoreConfig) (http.Handler, string) {
	b.Helper()
	cfg.LookupRate, cfg.LookupBurst = 1e9, 1e9 // measure the query, not the miss bound
	ks, err := NewKeyStore(ctxT(b), openDB(b, backend), cfg)
	if err != nil {
		b.Fatal(err)
	}
	_, raw, err := ks.Create(ctxT(b), KeySpec{Tenant: "acme", Types: []string{"billing.#"}})
	if err != nil {
		b.Fatal(err)
	}
	return (&Authenticator{Keys: ks}).Middleware("bench")(http.HandlerFunc(ingressHandler)), "Bearer " + raw
}

// BenchmarkAPIKeyCacheHit: a key verified from the in-process cache (the steady state:
// one database lookup per key per CacheTTL).
func BenchmarkAPIKeyCacheHit(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		h, auth := benchKeys(b, ledger.SQLite, KeyStoreConfig{CacheTTL: time.Hour})
		benchServe(b, h, auth)
	})
	b.Run("base_noauth", func(b *testing.B) { benchServe(b, baseline(), "") })
}

// BenchmarkAPIKeyCacheMissSQLite: every request looks the key up in the embedded
// default's SQLite file (cache disabled), the worst case after a restart or for a key
// seen less than once per CacheTTL.
func BenchmarkAPIKeyCacheMissSQLite(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		h, auth := benchKeys(b, ledger.SQLite, KeyStoreConfig{CacheTTL: -1})
		benchServe(b, h, auth)
	})
	b.Run("base_noauth", func(b *testing.B) { benchServe(b, baseline(), "") })
}

// BenchmarkAPIKeyCacheMissPostgres: the same on PostgreSQL over loopback.
func BenchmarkAPIKeyCacheMissPostgres(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		h, auth := benchKeys(b, ledger.Postgres, KeyStoreConfig{CacheTTL: -1})
		benchServe(b, h, auth)
	})
	b.Run("base_noauth", func(b *testing.B) { benchServe(b, baseline(), "") })
}

func benchJWT(b *testing.B, alg string, cacheTTL time.Duration) (http.Handler, string) {
	b.Helper()
	i := newIDP(b)
	v, _ := newVerifier(b, i, func(c *JWTConfig) { c.CacheTTL = cacheTTL })
	v.now = time.Now
	claims := i.claims(time.Now(), nil)
	claims["exp"] = time.Now().Add(time.Hour).Unix()
	var tok string
	switch alg {
	case "RS256":
		tok = sign(b, jwt.SigningMethodRS256, i.rsa, map[string]any{"kid": "rsa1"}, claims)
	case "ES256":
		tok = sign(b, jwt.SigningMethodES256, i.ec, map[string]any{"kid": "ec1"}, claims)
	}
	return (&Authenticator{JWT: v}).Middleware("bench")(http.HandlerFunc(ingressHandler)), "Bearer " + tok
}

// BenchmarkJWTRS256: a bearer JWT whose RSA-2048 signature is checked on every request
// (verified-token cache disabled).
func BenchmarkJWTRS256(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		h, auth := benchJWT(b, "RS256", -1)
		benchServe(b, h, auth)
	})
	b.Run("base_noauth", func(b *testing.B) { benchServe(b, baseline(), "") })
}

// BenchmarkJWTES256: the same with a P-256 signature.
func BenchmarkJWTES256(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		h, auth := benchJWT(b, "ES256", -1)
		benchServe(b, h, auth)
	})
	b.Run("base_noauth", func(b *testing.B) { benchServe(b, baseline(), "") })
}

// BenchmarkJWTCached: a publisher reusing its token, answered from the verified-token
// cache (the default).
func BenchmarkJWTCached(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		h, auth := benchJWT(b, "RS256", time.Hour)
		benchServe(b, h, auth)
	})
	b.Run("base_noauth", func(b *testing.B) { benchServe(b, baseline(), "") })
}
