package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/koder/eventhub/hub"
)

// JWTVerifier verifies bearer JWTs against an identity provider's key set, refreshed in
// the background, and maps them to principals: the tenant from the tenant claim, the
// publish scope, optional type patterns. Safe for concurrent use; Close stops the
// refresh.
type JWTVerifier struct {
	cfg    JWTConfig
	kf     keyfunc.Keyfunc
	parser *jwt.Parser
	cancel context.CancelFunc
	now    func() time.Time

	mu    sync.Mutex
	cache map[[32]byte]jwtCacheEntry
}

type jwtCacheEntry struct {
	p     Principal
	until time.Time
}

// NewJWTVerifier fetches the key set once (a failure is logged, not returned: the
// provider may come up after the hub, and unknown kids trigger a refresh) and starts
// the background refresh.
func NewJWTVerifier(ctx context.Context, cfg JWTConfig) (*JWTVerifier, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: cfg.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	limited := *client
	limited.Transport = limitBody{next: client.Transport}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	logErr := func(ctx context.Context, err error) {
		cfg.Logger.WarnContext(ctx, "auth: JWKS refresh failed", "url", cfg.JWKSURL, "error", err)
	}
	httpStore, err := jwkset.NewStorageFromHTTP(cfg.JWKSURL, jwkset.HTTPClientStorageOptions{
		Client:                    &limited,
		Ctx:                       rctx,
		HTTPTimeout:               cfg.Timeout,
		NoErrorReturnFirstHTTPReq: true,
		RefreshErrorHandler:       logErr,
		RefreshInterval:           cfg.RefreshInterval,
	})
	if err != nil {
		cancel()
		return nil, hub.Errorf(hub.InvalidArgument, "auth: JWKS %s: %w", cfg.JWKSURL, err)
	}
	var unknownKID *rate.Limiter
	if cfg.UnknownKIDRefresh > 0 {
		unknownKID = rate.NewLimiter(rate.Every(cfg.UnknownKIDRefresh), 1)
	}
	storage, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs: map[string]jwkset.Storage{cfg.JWKSURL: httpStore},
		// A request waits for an unknown-kid refresh only when one is allowed within
		// the fetch timeout; otherwise the limiter refuses at once (x/time/rate's Wait
		// checks the deadline first), so forged kids never queue requests.
		RateLimitWaitMax:  cfg.Timeout,
		RefreshUnknownKID: unknownKID,
	})
	if err != nil {
		cancel()
		return nil, hub.Errorf(hub.InvalidArgument, "auth: JWKS %s: %w", cfg.JWKSURL, err)
	}
	// Keys whose "use" is "enc" are for encryption and never verify signatures.
	kf, err := keyfunc.New(keyfunc.Options{Ctx: rctx, Storage: storage, UseWhitelist: []jwkset.USE{jwkset.UseSig, ""}})
	if err != nil {
		cancel()
		return nil, hub.Wrap(hub.Internal, err)
	}
	v := &JWTVerifier{cfg: cfg, kf: kf, cancel: cancel, now: time.Now, cache: map[[32]byte]jwtCacheEntry{}}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(cfg.Algorithms),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithLeeway(cfg.ClockSkew),
		jwt.WithExpirationRequired(), // a token without exp would never expire
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(func() time.Time { return v.now() }), // one clock for the library and the cache
	)
	return v, nil
}

// Close stops the background refresh.
func (v *JWTVerifier) Close() error {
	v.cancel()
	return nil
}

// Verify checks a compact JWT: an allowed algorithm, a signature by a key of the set,
// iss, aud, exp (required), nbf and iat within the clock skew, and a non-empty tenant
// claim. Every failure is Unauthenticated, naming what failed.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (Principal, error) {
	if len(token) > MaxCredentialLen {
		return Principal{}, badJWT("too long")
	}
	now := v.now()
	var sum [32]byte
	if v.cfg.CacheTTL > 0 {
		// A hit is the exact token string that passed every check below before.
		sum = sha256.Sum256([]byte(token))
		v.mu.Lock()
		e, ok := v.cache[sum]
		v.mu.Unlock()
		if ok && now.Before(e.until) {
			return e.p, nil
		}
	}
	if _, err := parseJWTHeader(token, v.cfg.Algorithms); err != nil {
		return Principal{}, err
	}
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(token, claims, v.kf.KeyfuncCtx(ctx)); err != nil {
		return Principal{}, jwtError(err)
	}
	p, err := v.principal(claims)
	if err != nil {
		return Principal{}, err
	}
	if v.cfg.CacheTTL > 0 {
		until := now.Add(v.cfg.CacheTTL)
		if exp, err := claims.GetExpirationTime(); err == nil && exp != nil && exp.Before(until) {
			until = exp.Time
		}
		v.mu.Lock()
		if len(v.cache) >= v.cfg.CacheSize {
			for k, e := range v.cache {
				if !now.Before(e.until) || len(v.cache) >= v.cfg.CacheSize {
					delete(v.cache, k)
				}
			}
		}
		v.cache[sum] = jwtCacheEntry{p: p, until: until}
		v.mu.Unlock()
	}
	return p, nil
}

func (v *JWTVerifier) principal(claims jwt.MapClaims) (Principal, error) {
	tenant, _ := claims[v.cfg.TenantClaim].(string)
	if tenant == "" {
		return Principal{}, unauthenticated("jwt", "auth: JWT has no "+quote(v.cfg.TenantClaim)+" claim (the tenant)", nil)
	}
	if err := checkText("tenant claim", tenant, maxTenantLen); err != nil {
		return Principal{}, unauthenticated("jwt", "auth: JWT tenant claim: "+err.Error(), nil)
	}
	id, _ := claims["sub"].(string)
	if id == "" {
		id, _ = claims["client_id"].(string)
	}
	if id == "" {
		id, _ = claims["azp"].(string)
	}
	p := Principal{Kind: KindJWT, ID: limit(id, 200), Tenant: tenant, Scopes: publishScopes}
	if v.cfg.TypesClaim != "" {
		var types []string
		switch t := claims[v.cfg.TypesClaim].(type) {
		case string:
			types = strings.Fields(t)
		case []any:
			for _, x := range t {
				s, ok := x.(string)
				if !ok {
					return Principal{}, unauthenticated("jwt", "auth: JWT claim "+quote(v.cfg.TypesClaim)+" must hold strings", nil)
				}
				types = append(types, s)
			}
		case nil:
		default:
			return Principal{}, unauthenticated("jwt", "auth: JWT claim "+quote(v.cfg.TypesClaim)+" must be a string or an array", nil)
		}
		compiled, err := compileTypes(types)
		if err != nil {
			return Principal{}, unauthenticated("jwt", "auth: JWT claim "+quote(v.cfg.TypesClaim)+": "+err.Error(), nil)
		}
		// A types claim that is present but empty allows nothing, not everything.
		if compiled == nil && claims[v.cfg.TypesClaim] != nil {
			compiled = []hub.Pattern{}
		}
		p.Types = compiled
	}
	return p, nil
}

// jwtError names the failed check of a golang-jwt error.
func jwtError(err error) error {
	why := "invalid token"
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		why = "malformed"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		why = "no key of the key set can verify it (unknown kid?)"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		why = "bad signature"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		why = "a required claim (exp) is missing"
	case errors.Is(err, jwt.ErrTokenExpired):
		why = "expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		why = "not valid yet (nbf)"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		why = "issued in the future (iat)"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		why = "wrong audience"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		why = "wrong issuer"
	case errors.Is(err, jwt.ErrTokenInvalidClaims):
		why = "invalid claims"
	}
	return unauthenticated("jwt", "auth: invalid JWT: "+why, err)
}

// limitBody caps key set responses, so a misbehaving provider cannot make the hub
// buffer an unbounded body.
type limitBody struct{ next http.RoundTripper }

func (l limitBody) RoundTrip(r *http.Request) (*http.Response, error) {
	next := l.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, maxJWKSBody), resp.Body}
	return resp, nil
}
