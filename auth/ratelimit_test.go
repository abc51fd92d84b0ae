package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
)

func limiter(t testing.TB, cfg RateLimitConfig) (*RateLimiter, *clock) {
	t.Helper()
	l, err := NewRateLimiter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := newClock()
	l.now = c.Now
	return l, c
}

func TestSEC_RateLimit(t *testing.T) {
	t.Parallel()
	keyA1 := Principal{Kind: KindAPIKey, ID: "a1", Tenant: "a"}
	keyA2 := Principal{Kind: KindAPIKey, ID: "a2", Tenant: "a"}
	keyB := Principal{Kind: KindAPIKey, ID: "b1", Tenant: "b"}

	t.Run("PerKeyBucketAndRetryAfter", func(t *testing.T) {
		t.Parallel()
		l, c := limiter(t, RateLimitConfig{PerKey: 2, KeyBurst: 4})
		if err := l.AllowN(keyA1, 4); err != nil {
			t.Fatal(err)
		}
		err := l.Allow(keyA1)
		wantCode(t, err, hub.ResourceExhausted)
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.RetryAfter != 500*time.Millisecond {
			t.Fatalf("%v: want Retry-After 500ms (one token at 2/s)", err)
		}
		if err := l.Allow(keyB); err != nil {
			t.Fatalf("another key has its own bucket: %v", err)
		}
		c.Add(500 * time.Millisecond)
		if err := l.Allow(keyA1); err != nil {
			t.Fatalf("after Retry-After: %v", err)
		}
	})

	t.Run("TenantBucketIsShared", func(t *testing.T) {
		t.Parallel()
		l, _ := limiter(t, RateLimitConfig{PerKey: 100, KeyBurst: 100, PerTenant: 1, TenantBurst: 3})
		if err := l.AllowN(keyA1, 2); err != nil {
			t.Fatal(err)
		}
		err := l.AllowN(keyA2, 2)
		wantCode(t, err, hub.ResourceExhausted)
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.RetryAfter != time.Second {
			t.Fatalf("%v: want 1s", err)
		}
		// The refused request took nothing from the key's own bucket either.
		if err := l.AllowN(keyA2, 1); err != nil {
			t.Fatal(err)
		}
		if err := l.Allow(keyB); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("OperatorsHaveNoTenantBucket", func(t *testing.T) {
		t.Parallel()
		l, _ := limiter(t, RateLimitConfig{PerTenant: 1, TenantBurst: 1})
		op := Principal{Kind: KindAdminToken, ID: "op"}
		for range 10 {
			if err := l.Allow(op); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("BatchLargerThanTheBurst", func(t *testing.T) {
		t.Parallel()
		l, _ := limiter(t, RateLimitConfig{PerKey: 10, KeyBurst: 5})
		err := l.AllowN(keyA1, 6)
		wantCode(t, err, hub.ResourceExhausted)
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.RetryAfter != 0 {
			t.Fatalf("%v: no retry can succeed", err)
		}
		if err := l.AllowN(keyA1, 5); err != nil {
			t.Fatalf("the refusal took tokens: %v", err)
		}
	})

	t.Run("Middleware429WithRetryAfter", func(t *testing.T) {
		t.Parallel()
		l, _ := limiter(t, RateLimitConfig{PerKey: 0.5, KeyBurst: 1})
		h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
		req := func() answer {
			r := httptest.NewRequest("GET", "/", nil)
			return serve(h, r.WithContext(NewContext(r.Context(), keyA1)))
		}
		if a := req(); a.status != 204 {
			t.Fatal(a.status)
		}
		a := req()
		if a.status != 429 || a.hdr.Get("Retry-After") != "2" || a.prob.Status != 429 {
			t.Fatalf("%d Retry-After %q %+v", a.status, a.hdr.Get("Retry-After"), a.prob)
		}
	})

	t.Run("IdleBucketsAreForgotten", func(t *testing.T) {
		t.Parallel()
		l, c := limiter(t, RateLimitConfig{PerKey: 1, KeyBurst: 1, Idle: time.Minute})
		_ = l.Allow(keyA1)
		c.Add(2 * time.Minute)
		_ = l.Allow(keyB)
		l.keys.mu.Lock()
		n := len(l.keys.m)
		l.keys.mu.Unlock()
		if n != 1 {
			t.Fatalf("%d buckets, want 1", n)
		}
	})

	t.Run("BadConfig", func(t *testing.T) {
		t.Parallel()
		for name, cfg := range map[string]RateLimitConfig{
			"Negative":   {PerKey: -1},
			"NoKeyBurst": {PerKey: 1},
			"NoTenBurst": {PerTenant: 1},
		} {
			if _, err := NewRateLimiter(cfg); hub.Code(err) != hub.InvalidArgument {
				t.Errorf("%s: %v", name, err)
			}
		}
		var nilLimiter *RateLimiter
		if nilLimiter.Allow(keyA1) != nil {
			t.Error("a nil limiter limits nothing")
		}
	})

	t.Run("RetryAfterSeconds", func(t *testing.T) {
		t.Parallel()
		for d, want := range map[time.Duration]string{0: "1", time.Millisecond: "1", time.Second: "1", 1001 * time.Millisecond: "2", time.Minute: "60"} {
			if got := RetryAfterSeconds(d); got != want {
				t.Errorf("%s: %s, want %s", d, got, want)
			}
		}
	})
}

func TestSEC_ConcurrencyLimit(t *testing.T) {
	t.Parallel()
	c := NewConcurrencyLimiter(2)
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(2)
	h := c.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered.Done()
		<-release
		w.WriteHeader(204)
	}))
	var done sync.WaitGroup
	for range 2 {
		done.Add(1)
		go func() {
			defer done.Done()
			if a := serve(h, httptest.NewRequest("GET", "/", nil)); a.status != 204 {
				t.Errorf("held request: %d", a.status)
			}
		}()
	}
	entered.Wait()
	if c.InFlight() != 2 {
		t.Fatalf("in flight %d", c.InFlight())
	}
	a := serve(h, httptest.NewRequest("GET", "/", nil))
	if a.status != 503 || a.hdr.Get("Retry-After") != "1" || a.prob.Status != 503 {
		t.Fatalf("third request: %d %v %+v", a.status, a.hdr, a.prob)
	}
	close(release)
	done.Wait()
	if c.InFlight() != 0 {
		t.Fatalf("in flight after the requests ended: %d", c.InFlight())
	}
	if NewConcurrencyLimiter(0).Middleware(http.NotFoundHandler()) == nil {
		t.Fatal("no limit must still give a handler")
	}
}

func TestSEC_Harden(t *testing.T) {
	t.Parallel()
	s := Harden(&http.Server{IdleTimeout: time.Second})
	if s.MaxHeaderBytes != DefaultMaxHeaderBytes || s.ReadHeaderTimeout != DefaultReadHeaderTimeout || s.IdleTimeout != time.Second {
		t.Fatalf("%+v", s)
	}
}
