package auth

import (
	"net/http"
	"time"
)

// Listener limits. Body limits stay with each handler (the ingress has its own).
const (
	// DefaultMaxHeaderBytes bounds a request's header block. Go's default is 1 MiB;
	// real requests (a JWT included) fit in a few KiB, and every byte of header is
	// parsed before any handler can refuse it.
	DefaultMaxHeaderBytes = 32 << 10
	// DefaultReadHeaderTimeout bounds the wait for the header block (slowloris).
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes keep-alive connections idle this long.
	DefaultIdleTimeout = 2 * time.Minute
)

// Harden fills the limits of srv left at zero: MaxHeaderBytes, ReadHeaderTimeout and
// IdleTimeout. It leaves ReadTimeout and WriteTimeout alone: they would cut a long
// batch upload or a slow consumer of a large answer, which the handlers bound instead.
func Harden(srv *http.Server) *http.Server {
	if srv.MaxHeaderBytes == 0 {
		srv.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if srv.ReadHeaderTimeout == 0 {
		srv.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if srv.IdleTimeout == 0 {
		srv.IdleTimeout = DefaultIdleTimeout
	}
	return srv
}

// ConcurrencyLimiter bounds the requests one listener serves at once. A request beyond
// the bound is refused at once with 503 and Retry-After: 1 rather than queued: under
// overload, queueing only adds latency to every request while the work stays the same.
// 503 (not 429) because it is the server's capacity, not the caller's quota, that ran
// out: clients and balancers retry a 503 elsewhere.
type ConcurrencyLimiter struct{ slots chan struct{} }

// NewConcurrencyLimiter allows n requests at once (n < 1: no limit).
func NewConcurrencyLimiter(n int) *ConcurrencyLimiter {
	if n < 1 {
		return &ConcurrencyLimiter{}
	}
	return &ConcurrencyLimiter{slots: make(chan struct{}, n)}
}

// Middleware applies the bound to next.
func (c *ConcurrencyLimiter) Middleware(next http.Handler) http.Handler {
	if c.slots == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case c.slots <- struct{}{}:
		default:
			WriteError(w, "", &RateLimitError{Msg: "auth: too many concurrent requests", RetryAfter: time.Second, Overloaded: true})
			return
		}
		defer func() { <-c.slots }()
		next.ServeHTTP(w, r)
	})
}

// InFlight is the number of requests being served.
func (c *ConcurrencyLimiter) InFlight() int { return len(c.slots) }
