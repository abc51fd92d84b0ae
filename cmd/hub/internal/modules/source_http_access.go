package modules

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/ingress"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
)

// Ingress credentials (the `auth` key of source.http).
const (
	// IngressAuthAPIKey accepts API keys made with `hub keys create` (needs a store).
	IngressAuthAPIKey = "api_key"
	// IngressAuthJWT accepts bearer JWTs verified against auth.jwt's key set.
	IngressAuthJWT = "jwt"
)

// IngressAccess is the access part of source.http (docs/security.md).
type IngressAccess struct {
	// Auth lists the credentials a publisher must present: api_key, jwt, or both. Each
	// pins the events' tenantid to its tenant (403 otherwise) and may restrict their
	// types; a missing or unknown credential is 401. Empty: no credential is needed from
	// loopback clients (the embedded default), which only a loopback listen allows; a
	// credential presented anyway is checked (an API key when a store is configured, a
	// JWT when auth.jwt is).
	Auth config.StringList `yaml:"auth"`
	// Hosts are further names the Host header may carry (see admin.hosts).
	Hosts []string `yaml:"hosts"`
	// Origins are other origins whose browsers may post events.
	Origins []string `yaml:"origins"`
	// RateLimit charges each event to its credential's and its tenant's token buckets:
	// per_key, key_burst, per_tenant, tenant_burst (events per second and bursts, per
	// process), idle. Zero rates: no limit. Beyond them, 429 with Retry-After.
	RateLimit auth.RateLimitConfig `yaml:"rate_limit"`
	// MaxConcurrent bounds the requests served at once (503 beyond). Default 0: none.
	MaxConcurrent int `yaml:"max_concurrent"`
	// MaxHeaderBytes bounds a request's header block. Default 32 KiB.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// TLS serves the ingress over HTTPS from cert/key files, reloaded without restart.
	TLS config.TLS `yaml:"tls"`

	store config.Store
	jwt   bool // auth.jwt is configured
}

func (a *IngressAccess) provision(pc *registry.ProvisionContext) {
	a.store = pc.Store
	a.jwt = pc.File != nil && pc.File.Config.Auth.JWT != nil
	if a.MaxHeaderBytes == 0 {
		a.MaxHeaderBytes = auth.DefaultMaxHeaderBytes
	}
}

func (a *IngressAccess) validate(listen string) []error {
	var errs []error
	seen := map[string]bool{}
	for i, m := range a.Auth {
		key := fmt.Sprintf("auth[%d]", i)
		if len(a.Auth) == 1 {
			key = "auth"
		}
		switch {
		case m != IngressAuthAPIKey && m != IngressAuthJWT:
			errs = append(errs, registry.Field(key, "unknown credential %q (%s, %s)", m, IngressAuthAPIKey, IngressAuthJWT))
		case seen[m]:
			errs = append(errs, registry.Field(key, "%q listed twice", m))
		case m == IngressAuthAPIKey && !a.store.Configured():
			errs = append(errs, registry.Field(key, "API keys live in the store: set store.sqlite or store.postgres"))
		case m == IngressAuthJWT && !a.jwt:
			errs = append(errs, registry.Field(key, "jwt needs the auth.jwt section (jwks_url, issuer, audience)"))
		}
		seen[m] = true
	}
	if _, _, err := net.SplitHostPort(listen); err == nil && len(a.Auth) == 0 && !config.IsLoopbackListen(listen) {
		errs = append(errs, registry.Field("auth", "an ingress on %s (not loopback) needs credentials: auth: [%s] and/or [%s]", listen, IngressAuthAPIKey, IngressAuthJWT))
	}
	if _, err := auth.NewRateLimiter(a.RateLimit); err != nil {
		errs = append(errs, registry.Field("rate_limit", "%v", err))
	}
	if a.MaxConcurrent < 0 {
		errs = append(errs, registry.Field("max_concurrent", "must not be negative"))
	}
	if a.MaxHeaderBytes < 0 {
		errs = append(errs, registry.Field("max_header_bytes", "must not be negative"))
	}
	if _, err := auth.NewGuard(auth.GuardConfig{Hosts: a.Hosts}); err != nil {
		errs = append(errs, registry.Field("hosts", "%v", err))
	}
	if _, err := auth.NewGuard(auth.GuardConfig{Origins: a.Origins}); err != nil {
		errs = append(errs, registry.Field("origins", "%v", err))
	}
	for _, e := range config.SplitJoined(a.TLS.Validate()) {
		var fe *config.FieldError
		if errors.As(e, &fe) {
			errs = append(errs, registry.Field("tls."+fe.Key, "%v", fe.Err))
		}
	}
	return errs
}

// build makes the access layer of a listener on listen, with the runtime's key store and
// JWT verifier.
func (a *IngressAccess) build(ctx context.Context, rt *registry.Runtime, listen string) (*ingress.Access, error) {
	g, err := auth.NewGuard(auth.GuardConfig{ListenAddr: listen, Hosts: a.Hosts, Origins: a.Origins})
	if err != nil {
		return nil, err
	}
	lim, err := auth.NewRateLimiter(a.RateLimit)
	if err != nil {
		return nil, err
	}
	au := &auth.Authenticator{AllowLoopback: len(a.Auth) == 0}
	if slices.Contains(a.Auth, IngressAuthAPIKey) || (len(a.Auth) == 0 && a.store.Configured()) {
		if au.Keys, err = rt.Keys(ctx); err != nil {
			return nil, err
		}
	}
	if slices.Contains(a.Auth, IngressAuthJWT) || len(a.Auth) == 0 {
		if rt.JWT != nil {
			au.JWT = rt.JWT
		} else if len(a.Auth) > 0 {
			return nil, errors.New("jwt: auth.jwt is not configured")
		}
	}
	acc := &ingress.Access{Guard: g, Authenticator: au, Concurrency: auth.NewConcurrencyLimiter(a.MaxConcurrent)}
	if a.RateLimit.PerKey > 0 || a.RateLimit.PerTenant > 0 {
		acc.Limits = lim
	}
	return acc, nil
}

// server returns the ingress's http.Server with the header limits applied.
func (a *IngressAccess) server(h http.Handler) *http.Server {
	srv := &http.Server{Handler: h, MaxHeaderBytes: a.MaxHeaderBytes}
	return auth.Harden(srv)
}
