package admin

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/auth"
)

// tokens is an admin token set of operator tokens, as admin.token gives it.
func tokens(t *testing.T, env string) *auth.AdminTokens {
	t.Helper()
	ts, err := auth.LoadAdminTokens(env, "")
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestAdminAuth(t *testing.T) {
	t.Parallel()
	get := func(h http.Handler, path, remote, auth string) int {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8081"+path, nil)
		r.RemoteAddr = remote
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	reg := prometheus.NewRegistry()

	t.Run("WithoutTokenOnlyLoopbackClients", func(t *testing.T) {
		t.Parallel()
		h := (&Server{Gatherer: reg}).Handler()
		cases := []struct {
			remote string
			want   int
		}{
			{"127.0.0.1:5000", http.StatusOK},
			{"[::1]:5000", http.StatusOK},
			{"10.0.0.7:5000", http.StatusForbidden},
			{"192.168.1.2:5000", http.StatusForbidden},
			{"[2001:db8::1]:5000", http.StatusForbidden},
		}
		for _, c := range cases {
			for _, path := range []string{"/routes", "/healthz", "/metrics"} {
				if got := get(h, path, c.remote, ""); got != c.want {
					t.Errorf("%s from %s: %d, want %d", path, c.remote, got, c.want)
				}
			}
		}
	})

	t.Run("TokenRequiredEverywhereButProbes", func(t *testing.T) {
		t.Parallel()
		h := (&Server{Access: Access{Tokens: tokens(t, "s3cret")}, Gatherer: reg}).Handler()
		cases := []struct {
			path, auth string
			want       int
		}{
			{"/routes", "", http.StatusUnauthorized},
			{"/routes", "Bearer wrong", http.StatusUnauthorized},
			{"/routes", "s3cret", http.StatusUnauthorized},
			{"/routes", "Basic s3cret", http.StatusUnauthorized},
			{"/routes", "Bearer s3cret", http.StatusOK},
			{"/metrics", "", http.StatusUnauthorized},
			{"/metrics", "Bearer s3cret", http.StatusOK},
			{"/endpoints", "", http.StatusUnauthorized},
			{"/dlq/redis", "", http.StatusUnauthorized},
			{"/healthz", "", http.StatusOK},
			{"/readyz", "", http.StatusOK},
		}
		for _, c := range cases {
			// With a token, remote clients are allowed: the token is the control.
			if got := get(h, c.path, "203.0.113.9:4000", c.auth); got != c.want {
				t.Errorf("%s with %q: %d, want %d", c.path, c.auth, got, c.want)
			}
		}
	})

	t.Run("MissingFeaturesAre404", func(t *testing.T) {
		t.Parallel()
		h := (&Server{Access: Access{Tokens: tokens(t, "t")}}).Handler()
		for _, path := range []string{"/dlq/nope", "/endpoints", "/deliveries", "/outbox"} {
			if got := get(h, path, "127.0.0.1:1", "Bearer t"); got != http.StatusNotFound {
				t.Errorf("%s: %d, want 404", path, got)
			}
		}
	})
}

// TestSEC_AdminLinkWithoutSigner: a link token presented to an API that has no link
// signer (no secret key) is refused like any unknown credential, header or query.
func TestSEC_AdminLinkWithoutSigner(t *testing.T) {
	t.Parallel()
	h := (&Server{Access: Access{Tokens: tokens(t, "operator-token-0123456789abcdef")}}).Handler()
	for _, r := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8081/endpoints?link=ehl_00000000.e30.x", nil),
		httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8081/endpoints", nil),
	} {
		r.RemoteAddr = "127.0.0.1:1"
		if r.URL.RawQuery == "" {
			r.Header.Set("Authorization", "Bearer ehl_00000000.e30.x")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401\n%s", r.URL, w.Code, w.Body)
		}
	}
}
