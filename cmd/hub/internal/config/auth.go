package config

import (
	"errors"
	"time"

	"github.com/koder/eventhub/auth"
)

// Auth configures the credentials the listeners accept beyond admin tokens: publishers'
// API keys (made with `hub keys create`, kept hashed in the store) and JWTs from an
// identity provider, link tokens for tenants, and the audit trail of admin actions. Which
// credentials the ingress asks for is its own `auth` key (source.http); the admin API
// takes admin tokens (admin.token, admin.token_file) and link tokens. See
// docs/security.md.
type Auth struct {
	// APIKeys tunes the API key store: its keys are auth.KeyStoreConfig's (cache_ttl,
	// cache_size, rotate_grace, lookup_rate, lookup_burst), zero keeping the library's
	// default.
	APIKeys auth.KeyStoreConfig `yaml:"api_keys"`
	// JWT verifies bearer JWTs against an identity provider's key set; its keys are
	// auth.JWTConfig's (jwks_url, issuer, audience, tenant_claim, types_claim,
	// algorithms, clock_skew, refresh_interval, unknown_kid_refresh, timeout, cache_ttl,
	// cache_size). Absent: no JWT is accepted.
	JWT *auth.JWTConfig `yaml:"jwt"`
	// Audit tunes the audit trail.
	Audit Audit `yaml:"audit"`
	// Links tunes link tokens (signed, expiring, tenant-scoped credentials issued by
	// POST /links), which need a secret key (see Secrets): they are signed with a key
	// derived from it.
	Links Links `yaml:"links"`
}

// Audit is the audit trail: every admin action is an slog record and, with a store, a
// row of auth_audit queryable through GET /audit.
type Audit struct {
	// Retention deletes rows older than this, checked hourly. Default 0: keep every row.
	Retention time.Duration `yaml:"retention"`
}

// Links tunes link tokens.
type Links struct {
	// TTL is the life of a link issued without one. Default 24h, at most 720h (30 days).
	TTL time.Duration `yaml:"ttl"`
}

// validate checks the binary's own keys; api_keys and jwt are the libraries' configs,
// validated by their own Validate on the configuration the library will use (each error
// placed at the key it names, as store.ledger's are).
func (a Auth) validate() error {
	var errs []error
	if a.Audit.Retention < 0 {
		errs = append(errs, Field("audit.retention", "must not be negative"))
	}
	if a.Links.TTL < 0 || a.Links.TTL > auth.MaxLinkTTL {
		errs = append(errs, Field("links.ttl", "between 0 and %s", auth.MaxLinkTTL))
	}
	return errors.Join(errs...)
}

func (a Auth) validateJWT() error {
	if a.JWT == nil {
		return nil
	}
	c := a.JWT.WithDefaults()
	return c.Validate()
}

// AdminAccess is the access part of the admin section: more tokens, the names and
// origins the request guard accepts, a concurrency bound and TLS.
type AdminAccess struct {
	// TokenFile is a file of admin tokens, one a line, each optionally scoped:
	// "<token> tenant=acme" sees and manages tenant acme's objects only,
	// "<token> scopes=read" reads only (auth.ParseAdminTokens). Relative to the config
	// file; read at start.
	TokenFile string `yaml:"token_file"`
	// Hosts are further names the Host header may carry (the listener's public names);
	// loopback names and addresses and the listen address are always allowed, and
	// anything else is refused (DNS rebinding). "*.example.com" allows subdomains.
	Hosts []string `yaml:"hosts"`
	// Origins are other origins whose browsers may call the API (a console on another
	// host). Cross-site requests from anywhere else are refused.
	Origins []string `yaml:"origins"`
	// MaxConcurrent bounds the requests served at once (503 beyond). Default 0: none.
	MaxConcurrent int `yaml:"max_concurrent"`
	// TLS serves the admin API over HTTPS.
	TLS TLS `yaml:"tls"`
}

func (a AdminAccess) validate() error {
	var errs []error
	if a.MaxConcurrent < 0 {
		errs = append(errs, Field("max_concurrent", "must not be negative"))
	}
	if _, err := auth.NewGuard(auth.GuardConfig{Hosts: a.Hosts}); err != nil {
		errs = append(errs, &FieldError{Key: "hosts", Err: err})
	}
	if _, err := auth.NewGuard(auth.GuardConfig{Origins: a.Origins}); err != nil {
		errs = append(errs, &FieldError{Key: "origins", Err: err})
	}
	if err := a.TLS.Validate(); err != nil {
		for _, e := range SplitJoined(err) {
			var fe *FieldError
			if errors.As(e, &fe) {
				errs = append(errs, &FieldError{Key: "tls." + fe.Key, Err: fe.Err})
			}
		}
	}
	return errors.Join(errs...)
}
