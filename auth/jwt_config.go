package auth

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/koder/eventhub/hub"
)

// Defaults of JWTConfig.
const (
	// DefaultTenantClaim is the claim holding the tenant id.
	DefaultTenantClaim = "tenant_id"
	// DefaultClockSkew is the leeway on exp, nbf and iat for clocks that disagree.
	DefaultClockSkew = 30 * time.Second
	// DefaultJWKSRefresh is the background refresh period of the key set.
	DefaultJWKSRefresh = time.Hour
	// DefaultJWKSUnknownKIDRefresh is the least time between refreshes triggered by a
	// token signed with a key id not in the set (an identity provider that rotated its
	// keys). Forged kids therefore cost the provider at most one request per period.
	DefaultJWKSUnknownKIDRefresh = time.Minute
	// DefaultJWKSTimeout bounds one fetch of the key set.
	DefaultJWKSTimeout = 10 * time.Second
	// DefaultJWTCacheTTL: a verified token is remembered this long (never past its exp),
	// so a publisher reusing its token pays for the signature check once.
	DefaultJWTCacheTTL = time.Minute
	// DefaultJWTCacheSize bounds the verified-token cache.
	DefaultJWTCacheSize = 10000
	// maxJWKSBody bounds a key set response.
	maxJWKSBody = 1 << 20
)

// DefaultJWTAlgorithms are the asymmetric JWS algorithms accepted by default. HMAC
// (HS*) is never accepted: its key would have to be in the public key set, and anyone
// who can read that could sign tokens. "none" is never accepted.
var DefaultJWTAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWTConfig configures a JWTVerifier.
type JWTConfig struct {
	// JWKSURL is the identity provider's key set. Required; https, or http to a loopback
	// address (a sidecar, tests).
	JWKSURL string `yaml:"jwks_url"`
	// Issuer must equal the iss claim. Required.
	Issuer string `yaml:"issuer"`
	// Audience must be one of the aud claim's values. Required.
	Audience string `yaml:"audience"`
	// TenantClaim names the top-level claim holding the tenant (a string, required in
	// every token). Default DefaultTenantClaim.
	TenantClaim string `yaml:"tenant_claim"`
	// TypesClaim optionally names a claim restricting event types: an array of hub
	// patterns or one space-separated string. Empty: tokens may publish every type.
	TypesClaim string `yaml:"types_claim"`
	// Algorithms accepted; a subset of DefaultJWTAlgorithms. Default all of them.
	Algorithms []string `yaml:"algorithms"`
	// ClockSkew: leeway on time claims, at most 5 minutes. Default DefaultClockSkew.
	ClockSkew time.Duration `yaml:"clock_skew"`
	// RefreshInterval: background refresh of the key set. Default DefaultJWKSRefresh.
	RefreshInterval time.Duration `yaml:"refresh_interval"`
	// UnknownKIDRefresh: least time between refreshes on an unknown kid. Default
	// DefaultJWKSUnknownKIDRefresh.
	UnknownKIDRefresh time.Duration `yaml:"unknown_kid_refresh"`
	// Timeout: one key set fetch. Default DefaultJWKSTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// CacheTTL: how long a verified token is remembered (never past its exp); negative
	// disables. Default DefaultJWTCacheTTL.
	CacheTTL time.Duration `yaml:"cache_ttl"`
	// CacheSize bounds that cache. Default DefaultJWTCacheSize.
	CacheSize int `yaml:"cache_size"`

	// HTTPClient fetches the key set. Default: a client with Timeout that follows no
	// redirect, so the https-or-loopback rule of JWKSURL holds for the URL fetched.
	HTTPClient *http.Client `yaml:"-"`
	// Logger receives key set refresh failures. Default slog.Default().
	Logger *slog.Logger `yaml:"-"`
}

func (c *JWTConfig) setDefaults() {
	if c.TenantClaim == "" {
		c.TenantClaim = DefaultTenantClaim
	}
	if len(c.Algorithms) == 0 {
		c.Algorithms = DefaultJWTAlgorithms
	}
	if c.ClockSkew == 0 {
		c.ClockSkew = DefaultClockSkew
	}
	if c.RefreshInterval == 0 {
		c.RefreshInterval = DefaultJWKSRefresh
	}
	if c.UnknownKIDRefresh == 0 {
		c.UnknownKIDRefresh = DefaultJWKSUnknownKIDRefresh
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultJWKSTimeout
	}
	if c.CacheTTL == 0 {
		c.CacheTTL = DefaultJWTCacheTTL
	}
	if c.CacheSize == 0 {
		c.CacheSize = DefaultJWTCacheSize
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// WithDefaults returns the configuration NewJWTVerifier would use: c with every unset
// field given its default, on a copy, fetching nothing. Tools that check a
// configuration before running (hub lint) validate this, so they carry no copy of the
// defaults.
func (c JWTConfig) WithDefaults() JWTConfig {
	c.setDefaults()
	return c
}

// Validate reports the first invalid field by name.
func (c *JWTConfig) Validate() error {
	bad := func(field, why string) error {
		return hub.Errorf(hub.InvalidArgument, "auth: JWTConfig.%s: %s", field, why)
	}
	u, err := url.Parse(c.JWKSURL)
	switch {
	case c.JWKSURL == "":
		return bad("JWKSURL", "required")
	case err != nil || u.Host == "":
		return bad("JWKSURL", "not an absolute URL")
	case u.User != nil:
		return bad("JWKSURL", "credentials in the URL")
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return bad("JWKSURL", "http is allowed to loopback addresses only; use https")
	case u.Scheme != "https" && u.Scheme != "http":
		return bad("JWKSURL", "scheme must be https")
	case c.Issuer == "":
		return bad("Issuer", "required")
	case c.Audience == "":
		return bad("Audience", "required")
	case c.ClockSkew < 0 || c.ClockSkew > 5*time.Minute:
		return bad("ClockSkew", "between 0 and 5m")
	case c.RefreshInterval < time.Second, c.UnknownKIDRefresh < 0, c.Timeout <= 0:
		return bad("RefreshInterval/UnknownKIDRefresh/Timeout", "must be positive (refresh at least 1s)")
	case c.CacheSize < 0:
		return bad("CacheSize", "must not be negative")
	}
	for _, a := range c.Algorithms {
		if !slices.Contains(DefaultJWTAlgorithms, a) {
			return bad("Algorithms", quote(a)+" is not an accepted asymmetric algorithm (none and HS* never are)")
		}
	}
	return nil
}

// loopbackHost reports whether host is a loopback name or address.
func loopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
