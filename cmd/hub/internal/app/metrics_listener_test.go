package app

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cmd/hub/internal/config"
)

// The separate metrics listener has no token (Prometheus scrapes it as it is) but the
// admin API's Host and cross-site checks: a page reading it through DNS rebinding is
// refused, and the runtime profiles are there only when metrics.pprof asks for them.
func TestSEC_MetricsListenerHostGuard(t *testing.T) {
	reg := prometheus.NewRegistry()
	get := func(h http.Handler, host, path string, hdr map[string]string) int {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	h, err := metricsListener(config.Metrics{Listen: "127.0.0.1:9090", Hosts: []string{"hub-1.internal"}}, reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host, path string
		hdr        map[string]string
		want       int
	}{
		{"127.0.0.1:9090", "/metrics", nil, http.StatusOK},
		{"localhost:9090", "/metrics", nil, http.StatusOK},
		{"hub-1.internal:9090", "/metrics", nil, http.StatusOK},
		{"attacker.example:9090", "/metrics", nil, http.StatusForbidden},
		{"127.0.0.1:9090", "/metrics", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"127.0.0.1:9090", "/debug/pprof/", nil, http.StatusNotFound},
	} {
		if got := get(h, c.host, c.path, c.hdr); got != c.want {
			t.Errorf("GET %s%s %v = %d, want %d", c.host, c.path, c.hdr, got, c.want)
		}
	}
	h, err = metricsListener(config.Metrics{Listen: "127.0.0.1:9090", Pprof: true}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if got := get(h, "127.0.0.1:9090", "/debug/pprof/", nil); got != http.StatusOK {
		t.Errorf("GET /debug/pprof/ with pprof on = %d, want 200", got)
	}
	if got := get(h, "attacker.example", "/debug/pprof/", nil); got != http.StatusForbidden {
		t.Errorf("GET /debug/pprof/ with a foreign Host = %d, want 403", got)
	}
	if _, err := metricsListener(config.Metrics{Listen: "127.0.0.1:9090", Hosts: []string{"bad host/"}}, reg); err == nil {
		t.Error("a malformed metrics.hosts entry was accepted")
	}
}
