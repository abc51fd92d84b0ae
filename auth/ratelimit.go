package auth

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/koder/eventhub/hub"
)

// Defaults of RateLimitConfig.
const (
	// DefaultLimiterIdle: a credential's or tenant's bucket unused this long is
	// forgotten (it would be full again by then anyway at any sane rate).
	DefaultLimiterIdle = 10 * time.Minute
	// DefaultLimiterMax bounds the number of buckets kept per level.
	DefaultLimiterMax = 100000
)

// RateLimitConfig sets token buckets per credential and per tenant. Rates are per
// second and count what the caller passes to AllowN (events at the ingress, requests
// elsewhere). Zero disables a level.
//
// The buckets are per process: with N replicas behind a balancer a client can reach up
// to N times the rate. That is the usual trade for a limiter with no shared state on
// the hot path; divide the rate by the replica count when the sum matters.
type RateLimitConfig struct {
	// PerKey, KeyBurst: one bucket per credential (API key id, JWT subject, token id).
	PerKey   float64 `yaml:"per_key"`
	KeyBurst int     `yaml:"key_burst"`
	// PerTenant, TenantBurst: one bucket per tenant, shared by its credentials.
	PerTenant   float64 `yaml:"per_tenant"`
	TenantBurst int     `yaml:"tenant_burst"`
	// Idle: see DefaultLimiterIdle.
	Idle time.Duration `yaml:"idle"`
}

// RateLimiter applies RateLimitConfig. Safe for concurrent use.
type RateLimiter struct {
	cfg    RateLimitConfig
	now    func() time.Time
	keys   buckets
	tenant buckets
}

type buckets struct {
	mu    sync.Mutex
	m     map[string]*bucket
	swept time.Time
}

type bucket struct {
	lim  *rate.Limiter
	used time.Time
}

// NewRateLimiter validates cfg and returns the limiter.
func NewRateLimiter(cfg RateLimitConfig) (*RateLimiter, error) {
	if cfg.Idle == 0 {
		cfg.Idle = DefaultLimiterIdle
	}
	switch {
	case cfg.PerKey < 0 || cfg.PerTenant < 0:
		return nil, hub.Errorf(hub.InvalidArgument, "auth: RateLimitConfig: rates must not be negative")
	case cfg.PerKey > 0 && cfg.KeyBurst < 1:
		return nil, hub.Errorf(hub.InvalidArgument, "auth: RateLimitConfig.KeyBurst: at least 1 (and at least the largest batch)")
	case cfg.PerTenant > 0 && cfg.TenantBurst < 1:
		return nil, hub.Errorf(hub.InvalidArgument, "auth: RateLimitConfig.TenantBurst: at least 1 (and at least the largest batch)")
	}
	return &RateLimiter{cfg: cfg, now: time.Now, keys: buckets{m: map[string]*bucket{}}, tenant: buckets{m: map[string]*bucket{}}}, nil
}

// Allow is AllowN(p, 1).
func (l *RateLimiter) Allow(p Principal) error { return l.AllowN(p, 1) }

// AllowN takes n tokens from p's credential bucket and from its tenant's (operators
// have no tenant bucket). When either is short, nothing is taken and the error is a
// *RateLimitError whose RetryAfter is when both would have the tokens.
func (l *RateLimiter) AllowN(p Principal, n int) error {
	if l == nil {
		return nil
	}
	now := l.now()
	var rs []*rate.Reservation
	cancel := func() {
		for _, r := range rs {
			r.CancelAt(now)
		}
	}
	var wait time.Duration
	check := func(b *buckets, key string, r float64, burst int, what string) error {
		if r <= 0 || key == "" {
			return nil
		}
		if n > burst {
			cancel()
			return &RateLimitError{Msg: "auth: a request of " + strconv.Itoa(n) + " exceeds the " + what + " burst of " + strconv.Itoa(burst)}
		}
		res := b.get(key, r, burst, now, l.cfg.Idle).ReserveN(now, n)
		rs = append(rs, res)
		wait = max(wait, res.DelayFrom(now))
		return nil
	}
	if err := check(&l.keys, string(p.Kind)+":"+p.ID, l.cfg.PerKey, l.cfg.KeyBurst, "per-key"); err != nil {
		return err
	}
	if err := check(&l.tenant, p.Tenant, l.cfg.PerTenant, l.cfg.TenantBurst, "per-tenant"); err != nil {
		return err
	}
	if wait > 0 {
		cancel()
		return &RateLimitError{Msg: "auth: rate limit of " + string(p.Kind) + " " + p.ID + " exceeded", RetryAfter: wait}
	}
	return nil
}

func (b *buckets) get(key string, r float64, burst int, now time.Time, idle time.Duration) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.swept) > idle || len(b.m) >= DefaultLimiterMax {
		for k, v := range b.m {
			if now.Sub(v.used) > idle {
				delete(b.m, k)
			}
		}
		b.swept = now
	}
	e, ok := b.m[key]
	if !ok {
		if len(b.m) >= DefaultLimiterMax {
			// Still full of live buckets: a fresh, full bucket for this caller. Limits
			// then hold only per request burst, never failing closed for real callers.
			return rate.NewLimiter(rate.Limit(r), burst)
		}
		e = &bucket{lim: rate.NewLimiter(rate.Limit(r), burst)}
		b.m[key] = e
	}
	e.used = now
	return e.lim
}

// Middleware charges one token per request to the principal in the request's context
// (so it runs after Authenticator.Middleware) and answers 429 with Retry-After.
func (l *RateLimiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := FromContext(r.Context()); ok {
			if err := l.Allow(p); err != nil {
				WriteError(w, "", err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
