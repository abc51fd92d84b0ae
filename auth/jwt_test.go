package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
)

const (
	testIssuer   = "https://idp.example"
	testAudience = "eventhub"
)

// idp is an identity provider for tests: a JWKS over httptest with an RSA, an EC and
// (to try algorithm confusion) a symmetric key.
type idp struct {
	srv  *httptest.Server
	rsa  *rsa.PrivateKey
	ec   *ecdsa.PrivateKey
	oct  []byte
	hits atomic.Int32

	mu   sync.Mutex
	keys []jwkset.JWKMarshal
}

var (
	testRSAOnce sync.Once
	testRSA     [3]*rsa.PrivateKey // generation is slow: shared by every test
)

func rsaKey(i int) *rsa.PrivateKey {
	testRSAOnce.Do(func() {
		for j := range testRSA {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			testRSA[j] = k
		}
	})
	return testRSA[i]
}

func newIDP(t testing.TB) *idp {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	i := &idp{rsa: rsaKey(0), ec: ec, oct: []byte("0123456789abcdef0123456789abcdef")}
	i.add(t, &i.rsa.PublicKey, "rsa1", jwkset.AlgRS256, jwkset.UseSig)
	i.add(t, &i.ec.PublicKey, "ec1", jwkset.AlgES256, "")
	i.add(t, i.oct, "oct1", jwkset.AlgHS256, jwkset.UseSig)
	i.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i.hits.Add(1)
		i.mu.Lock()
		defer i.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(jwkset.JWKSMarshal{Keys: i.keys})
	}))
	t.Cleanup(i.srv.Close)
	return i
}

func (i *idp) add(t testing.TB, key any, kid string, alg jwkset.ALG, use jwkset.USE) {
	t.Helper()
	j, err := jwkset.NewJWKFromKey(key, jwkset.JWKOptions{
		Marshal:  jwkset.JWKMarshalOptions{Private: true},
		Metadata: jwkset.JWKMetadataOptions{KID: kid, ALG: alg, USE: use},
	})
	if err != nil {
		t.Fatal(err)
	}
	i.mu.Lock()
	i.keys = append(i.keys, j.Marshal())
	i.mu.Unlock()
}

func (i *idp) claims(now time.Time, mod func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{"iss": testIssuer, "aud": testAudience, "sub": "svc-billing",
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "tenant_id": "acme"}
	if mod != nil {
		mod(c)
	}
	return c
}

func sign(t testing.TB, m jwt.SigningMethod, key any, hdr map[string]any, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	for k, v := range hdr {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rawJWT builds a compact JWS by hand (for headers golang-jwt would not produce),
// signed with HMAC-SHA256 under key.
func rawJWT(hdr map[string]any, c jwt.MapClaims, key []byte) string {
	h, _ := json.Marshal(hdr)
	p, _ := json.Marshal(c)
	signed := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return signed + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func newVerifier(t testing.TB, i *idp, mod func(*JWTConfig)) (*JWTVerifier, *clock) {
	t.Helper()
	cfg := JWTConfig{JWKSURL: i.srv.URL, Issuer: testIssuer, Audience: testAudience, CacheTTL: -1, Logger: testenv.Logger(t)}
	if mod != nil {
		mod(&cfg)
	}
	v, err := NewJWTVerifier(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close() })
	c := newClock()
	v.now = c.Now
	return v, c
}

func TestSEC_JWT(t *testing.T) {
	t.Parallel()
	i := newIDP(t)
	v, c := newVerifier(t, i, nil)
	now := c.Now()
	rsaHdr := map[string]any{"kid": "rsa1"}
	ecHdr := map[string]any{"kid": "ec1"}
	good := i.claims(now, nil)
	cases := []struct {
		name  string
		token string
		why   string // "" = accepted
	}{
		{"GoodRSA", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, good), ""},
		{"GoodEC", sign(t, jwt.SigningMethodES256, i.ec, ecHdr, good), ""},
		{"GoodWithoutKid", sign(t, jwt.SigningMethodES256, i.ec, nil, good), ""},
		{"BadSignature", sign(t, jwt.SigningMethodRS256, rsaKey(1), rsaHdr, good), "bad signature"},
		{"TamperedPayload", func() string {
			s := sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, good)
			parts := strings.Split(s, ".")
			other, _ := json.Marshal(i.claims(now, func(c jwt.MapClaims) { c["tenant_id"] = "globex" }))
			return parts[0] + "." + base64.RawURLEncoding.EncodeToString(other) + "." + parts[2]
		}(), "bad signature"},
		{"WrongAudience", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { c["aud"] = "other" })), "wrong audience"},
		{"AudienceList", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { c["aud"] = []string{"x", testAudience} })), ""},
		{"WrongIssuer", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { c["iss"] = "https://evil" })), "wrong issuer"},
		{"Expired", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() })), "expired"},
		{"ExpiredWithinSkew", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() })), ""},
		{"NotYetValid", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Minute).Unix() })), "not valid yet"},
		{"IssuedInTheFuture", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() })), "issued in the future"},
		{"NoExpiry", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { delete(c, "exp") })), "exp"},
		{"MissingTenantClaim", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { delete(c, "tenant_id") })), `"tenant_id" claim`},
		{"EmptyTenantClaim", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { c["tenant_id"] = "" })), `"tenant_id" claim`},
		{"NumericTenantClaim", sign(t, jwt.SigningMethodRS256, i.rsa, rsaHdr, i.claims(now, func(c jwt.MapClaims) { c["tenant_id"] = 42 })), `"tenant_id" claim`},
		{"AlgNone", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, nil, good), "unsigned"},
		{"AlgNoneWithSignature", rawJWT(map[string]any{"alg": "none"}, good, []byte("x")), `"none" is not allowed`},
		{"HS256WithTheJWKSKey", sign(t, jwt.SigningMethodHS256, i.oct, map[string]any{"kid": "oct1"}, good), `"HS256" is not allowed`},
		{"RS256HeaderOverSymmetricKey", rawJWT(map[string]any{"alg": "RS256", "kid": "oct1"}, good, i.oct), "no key"},
		{"ECKeyForRSAToken", sign(t, jwt.SigningMethodRS256, i.rsa, ecHdr, good), "no key"},
		{"UnknownKid", sign(t, jwt.SigningMethodRS256, rsaKey(1), map[string]any{"kid": "nope"}, good), "no key"},
		{"CritHeader", sign(t, jwt.SigningMethodRS256, i.rsa, map[string]any{"kid": "rsa1", "crit": []string{"exp"}}, good), "crit"},
		{"NotAJWT", "eyJhbGciOiJSUzI1NiJ9.bad", "compact JWS"},
		{"Garbage", "eyJ!.x.y", "base64url"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := v.Verify(ctxT(t), tc.token)
			if tc.why == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if p.Kind != KindJWT || p.Tenant != "acme" || p.ID != "svc-billing" || !p.Can(ScopePublish) || p.Types != nil {
					t.Fatalf("principal %+v", p)
				}
				return
			}
			wantCode(t, err, hub.Unauthenticated)
			if !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("error %q, want it to say %q", err, tc.why)
			}
		})
	}
}

func TestSEC_JWTKeySet(t *testing.T) {
	t.Parallel()

	t.Run("RotatedProviderKeyIsFetchedOnFirstUse", func(t *testing.T) {
		t.Parallel()
		i := newIDP(t)
		v, c := newVerifier(t, i, func(cfg *JWTConfig) { cfg.UnknownKIDRefresh = time.Hour })
		before := i.hits.Load()
		i.add(t, &rsaKey(2).PublicKey, "rsa2", jwkset.AlgRS256, jwkset.UseSig)
		tok := sign(t, jwt.SigningMethodRS256, rsaKey(2), map[string]any{"kid": "rsa2"}, i.claims(c.Now(), nil))
		if _, err := v.Verify(ctxT(t), tok); err != nil {
			t.Fatalf("new key: %v", err)
		}
		if got := i.hits.Load() - before; got != 1 {
			t.Fatalf("%d fetches for the new kid, want 1", got)
		}
		// Forged kids now cost nothing: the refresh budget is spent for the hour, and
		// the request is refused at once instead of waiting for it.
		forged := sign(t, jwt.SigningMethodRS256, rsaKey(1), map[string]any{"kid": "forged"}, i.claims(c.Now(), nil))
		start := time.Now()
		for range 20 {
			_, err := v.Verify(ctxT(t), forged)
			wantCode(t, err, hub.Unauthenticated)
		}
		if got := i.hits.Load() - before; got != 1 {
			t.Fatalf("%d fetches after forged kids, want still 1", got)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("forged kids waited %s", d)
		}
	})

	t.Run("EncryptionKeysNeverVerify", func(t *testing.T) {
		t.Parallel()
		i := newIDP(t)
		i.add(t, &rsaKey(1).PublicKey, "enc1", jwkset.AlgRS256, jwkset.UseEnc)
		v, c := newVerifier(t, i, nil)
		tok := sign(t, jwt.SigningMethodRS256, rsaKey(1), map[string]any{"kid": "enc1"}, i.claims(c.Now(), nil))
		_, err := v.Verify(ctxT(t), tok)
		wantCode(t, err, hub.Unauthenticated)
	})

	t.Run("UnreachableProviderAtStart", func(t *testing.T) {
		t.Parallel()
		i := newIDP(t)
		tok := sign(t, jwt.SigningMethodRS256, i.rsa, map[string]any{"kid": "rsa1"}, i.claims(time.Now(), nil))
		i.srv.Close()
		v, _ := newVerifier(t, i, nil)
		_, err := v.Verify(ctxT(t), tok)
		wantCode(t, err, hub.Unauthenticated)
	})

	t.Run("OversizedKeySetIsRefused", func(t *testing.T) {
		t.Parallel()
		i := newIDP(t)
		big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			i.mu.Lock()
			keys := append([]jwkset.JWKMarshal(nil), i.keys...)
			i.mu.Unlock()
			pad := strings.Repeat(" ", maxJWKSBody)
			_, _ = w.Write([]byte(`{"pad":"` + pad + `",`))
			b, _ := json.Marshal(keys)
			_, _ = w.Write([]byte(`"keys":` + string(b) + `}`))
		}))
		t.Cleanup(big.Close)
		i.srv = big
		v, c := newVerifier(t, i, nil)
		tok := sign(t, jwt.SigningMethodRS256, i.rsa, map[string]any{"kid": "rsa1"}, i.claims(c.Now(), nil))
		_, err := v.Verify(ctxT(t), tok)
		wantCode(t, err, hub.Unauthenticated)
	})

	t.Run("TypesClaim", func(t *testing.T) {
		t.Parallel()
		i := newIDP(t)
		v, c := newVerifier(t, i, func(cfg *JWTConfig) { cfg.TypesClaim = "event_types" })
		hdr := map[string]any{"kid": "rsa1"}
		for name, tc := range map[string]struct {
			val      any
			allowed  string
			refused  string
			rejected bool
		}{
			"Array":   {[]string{"billing.#"}, "billing.invoice.paid", "user.created", false},
			"String":  {"billing.# user.created", "user.created", "user.deleted", false},
			"Empty":   {[]string{}, "", "billing.x", false},
			"Absent":  {nil, "anything.at.all", "", false},
			"BadType": {42, "", "", true},
			"BadItem": {[]any{"ok", 1}, "", "", true},
			"Invalid": {[]string{"a..b"}, "", "", true},
		} {
			t.Run(name, func(t *testing.T) {
				tok := sign(t, jwt.SigningMethodRS256, i.rsa, hdr, i.claims(c.Now(), func(cl jwt.MapClaims) {
					if tc.val != nil {
						cl["event_types"] = tc.val
					}
				}))
				p, err := v.Verify(ctxT(t), tok)
				if tc.rejected {
					wantCode(t, err, hub.Unauthenticated)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if tc.allowed != "" && !p.AllowsType(tc.allowed) {
					t.Errorf("%s refused", tc.allowed)
				}
				if tc.refused != "" && p.AllowsType(tc.refused) {
					t.Errorf("%s allowed", tc.refused)
				}
			})
		}
	})

	t.Run("CacheNeverOutlivesExp", func(t *testing.T) {
		t.Parallel()
		i := newIDP(t)
		v, c := newVerifier(t, i, func(cfg *JWTConfig) { cfg.CacheTTL = time.Hour; cfg.ClockSkew = time.Second })
		tok := sign(t, jwt.SigningMethodES256, i.ec, nil, i.claims(c.Now(), func(cl jwt.MapClaims) {
			cl["exp"] = c.Now().Add(time.Minute).Unix()
		}))
		for range 3 {
			if _, err := v.Verify(ctxT(t), tok); err != nil {
				t.Fatal(err)
			}
		}
		if len(v.cache) != 1 {
			t.Fatalf("%d cached tokens, want 1", len(v.cache))
		}
		c.Add(time.Minute + 2*time.Second)
		_, err := v.Verify(ctxT(t), tok)
		wantCode(t, err, hub.Unauthenticated)
	})
}

func TestSEC_JWTConfig(t *testing.T) {
	t.Parallel()
	base := JWTConfig{JWKSURL: "https://idp.example/jwks", Issuer: testIssuer, Audience: testAudience}
	for name, mod := range map[string]func(*JWTConfig){
		"NoURL":         func(c *JWTConfig) { c.JWKSURL = "" },
		"RelativeURL":   func(c *JWTConfig) { c.JWKSURL = "/jwks" },
		"PlainHTTP":     func(c *JWTConfig) { c.JWKSURL = "http://idp.example/jwks" },
		"OtherScheme":   func(c *JWTConfig) { c.JWKSURL = "ftp://idp.example/jwks" },
		"Credentials":   func(c *JWTConfig) { c.JWKSURL = "https://u:p@idp.example/jwks" },
		"NoIssuer":      func(c *JWTConfig) { c.Issuer = "" },
		"NoAudience":    func(c *JWTConfig) { c.Audience = "" },
		"HugeSkew":      func(c *JWTConfig) { c.ClockSkew = time.Hour },
		"AlgNone":       func(c *JWTConfig) { c.Algorithms = []string{"none"} },
		"HMAC":          func(c *JWTConfig) { c.Algorithms = []string{"RS256", "HS256"} },
		"UnknownAlg":    func(c *JWTConfig) { c.Algorithms = []string{"RS1"} },
		"FastRefresh":   func(c *JWTConfig) { c.RefreshInterval = time.Millisecond },
		"NegativeCache": func(c *JWTConfig) { c.CacheSize = -1 },
	} {
		c := base
		mod(&c)
		c.setDefaults()
		if err := c.Validate(); hub.Code(err) != hub.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
	for name, u := range map[string]string{"HTTPS": "https://idp.example/jwks", "Loopback": "http://127.0.0.1:9/jwks", "Localhost": "http://localhost:9/jwks"} {
		c := base
		c.JWKSURL = u
		c.setDefaults()
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzJWTHeader(f *testing.F) {
	now := time.Now()
	c := jwt.MapClaims{"exp": now.Add(time.Hour).Unix(), "tenant_id": "acme"}
	f.Add(sign(f, jwt.SigningMethodRS256, rsaKey(0), map[string]any{"kid": "rsa1"}, c))
	f.Add(rawJWT(map[string]any{"alg": "none"}, c, nil))
	f.Add(rawJWT(map[string]any{"alg": "RS256", "crit": []string{"b64"}}, c, nil))
	f.Add("eyJ.e30.")
	f.Add("a.b.c.d")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseJWTHeader(s, DefaultJWTAlgorithms)
		if err != nil {
			if hub.Code(err) != hub.Unauthenticated {
				t.Fatalf("code %v", hub.Code(err))
			}
			return
		}
		if h.Alg == "none" || strings.HasPrefix(h.Alg, "HS") || h.Crit != nil {
			t.Fatalf("accepted header %+v", h)
		}
		if strings.Count(s, ".") != 2 || len(s) > MaxCredentialLen {
			t.Fatalf("accepted %q", s)
		}
	})
}
