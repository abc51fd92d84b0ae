package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestStatus: hub status reads /readyz, /transports and /outbox and prints the hub's
// readiness, each transport with what it holds, the outbox; exit 0 when ready, 3 when
// not (the report still printed) or unreachable, 5 when the token is refused; a hub
// whose routes use no outbox (404) prints no outbox section.
func TestStatus(t *testing.T) {
	t.Parallel()
	var ready, outbox atomic.Bool
	ready.Store(true)
	outbox.Store(true)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/readyz":
			if !ready.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"status":"not ready","transports":{"redis":"unreachable"}}`))
				return
			}
			_, _ = w.Write([]byte(`{"status":"ready"}`))
		case "/transports":
			_, _ = w.Write([]byte(`[
				{"name":"redis","type":"transport.redisstream","health":"ok","status":{"stream":"events","length":42,
					"groups":[{"name":"billing","consumers":2,"pending":3,"lag":7},{"name":"audit","pending":0,"lag":-1}]}},
				{"name":"hooks","type":"transport.webhook","health":"ok","status":{"breakers":[
					{"endpoint_id":"ep_1","state":"closed"},{"endpoint_id":"ep_2","state":"open"}]}},
				{"name":"amqp","type":"transport.rabbitmq","health":"ok","status":null}]`))
		case "/outbox":
			if !outbox.Load() {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			_, _ = w.Write([]byte(`[{"destination":"redis","pending":5,"running":1,"dead":2}]`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(admin.Close)
	vars := map[string]string{"HUB_ADMIN_URL": admin.URL, "HUB_ADMIN_TOKEN": "t"}

	r := run(t, vars, "status")
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"hub: ready", "stream events: 42 entries; group billing: 3 pending, lag 7; group audit: 0 pending, lag unknown",
		"breakers: 1 closed, 1 open, 0 half-open", "rabbitmq", "OUTBOX TO", "redis      5        1        2"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status output lacks %q:\n%s", want, r.stdout)
		}
	}
	ready.Store(false)
	if r := run(t, vars, "status"); r.code != ExitUnavailable || !strings.Contains(r.stdout, "hub: not ready") {
		t.Errorf("not ready: exit %d, want %d with the report\n%s", r.code, ExitUnavailable, r.stdout)
	}
	ready.Store(true)
	outbox.Store(false)
	if r := run(t, vars, "status"); r.code != ExitOK || strings.Contains(r.stdout, "outbox") || strings.Contains(r.stdout, "OUTBOX") {
		t.Errorf("no outbox: exit %d, and no outbox section wanted\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, map[string]string{"HUB_ADMIN_URL": admin.URL}, "status", "--token", "wrong"); r.code != ExitDenied {
		t.Errorf("refused token: exit %d, want %d\n%s", r.code, ExitDenied, r.stderr)
	}
	if r := run(t, nil, "status", "--admin-url", "http://127.0.0.1:1"); r.code != ExitUnavailable || !strings.Contains(r.stderr, "unreachable") {
		t.Errorf("unreachable: exit %d, want %d\n%s", r.code, ExitUnavailable, r.stderr)
	}
}
