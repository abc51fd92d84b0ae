// Package admin is the hub binary's operations API: health and readiness, routes,
// transport status, DLQs, webhook endpoints and deliveries, the outbox, and Prometheus
// metrics. It adds no behaviour: every operation is a library call behind the ops
// interfaces.
package admin

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/hub"
)

// Route describes one configured route for GET /routes.
type Route struct {
	Pattern    string   `json:"pattern"`
	To         []string `json:"to"`
	Delivery   string   `json:"delivery"`
	Attempts   int      `json:"attempts,omitempty"`
	Backoff    string   `json:"backoff,omitempty"`
	MaxBackoff string   `json:"max_backoff,omitempty"`
}

// Transport is one transport the admin API reports on and operates.
type Transport struct {
	Name      string
	Type      string // module ID
	Transport hub.Transport
	Module    any // the module: may implement ops.Statuser, ops.DLQProvider, ops.WebhookProvider
}

// Server is the admin API handler.
type Server struct {
	// Token, when set, is required as "Authorization: Bearer <token>" on every path but
	// /healthz and /readyz. When empty, only loopback clients are answered.
	Token      string
	Routes     []Route
	Transports []Transport
	// Sources are listed for DLQ operations (a consumer group's DLQ belongs to its source).
	Sources  []Transport
	Outbox   ops.Outbox // nil when no route uses the outbox
	Gatherer prometheus.Gatherer
	Logger   *slog.Logger
	// Ready reports whether the hub finished starting (readiness before transports).
	Ready func() bool

	mux *http.ServeMux
}

// Handler builds the routes. Go 1.22 ServeMux patterns are enough here; a router
// library would add a dependency for nothing.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("GET /routes", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, s.Routes) })
	mux.HandleFunc("GET /transports", s.transports)
	s.dlqRoutes(mux)
	s.webhookRoutes(mux)
	s.outboxRoutes(mux)
	if s.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(s.Gatherer, promhttp.HandlerOpts{}))
	}
	s.mux = mux
	return s.auth(mux)
}

// auth enforces the bearer token, or loopback-only clients when there is no token.
func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Token == "" {
			if !loopbackClient(r.RemoteAddr) {
				writeError(w, http.StatusForbidden, "the admin API has no token configured and answers loopback clients only")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			next.ServeHTTP(w, r)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="hub-admin"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackClient(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.Ready != nil && !s.Ready() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "starting"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	checks := map[string]string{}
	ok := true
	for _, t := range s.Transports {
		hc, is := t.Transport.(hub.HealthChecker)
		if !is {
			continue
		}
		if err := hc.Health(ctx); err != nil {
			checks[t.Name] = err.Error()
			ok = false
		} else {
			checks[t.Name] = "ok"
		}
	}
	status := http.StatusOK
	state := "ready"
	if !ok {
		status, state = http.StatusServiceUnavailable, "degraded"
	}
	writeJSON(w, status, map[string]any{"status": state, "transports": checks})
}

func (s *Server) transports(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	out := make([]map[string]any, 0, len(s.Transports))
	for _, t := range s.Transports {
		m := map[string]any{"name": t.Name, "type": t.Type}
		if hc, ok := t.Transport.(hub.HealthChecker); ok {
			if err := hc.Health(ctx); err != nil {
				m["health"] = err.Error()
			} else {
				m["health"] = "ok"
			}
		}
		if st, ok := t.Module.(ops.Statuser); ok {
			v, err := st.Status(ctx)
			if err != nil {
				m["status_error"] = err.Error()
			} else {
				m["status"] = v
			}
		}
		_, m["dlq"] = t.Module.(ops.DLQProvider)
		out = append(out, m)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) transport(name string) (Transport, bool) {
	for _, t := range append(append([]Transport{}, s.Transports...), s.Sources...) {
		if t.Name == name {
			return t, true
		}
	}
	return Transport{}, false
}

// writeJSON writes v as the response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeError writes an RFC 9457 problem body.
func writeError(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": http.StatusText(status), "status": status, "detail": detail})
}

// writeErr maps a library error's hub code to a status.
func writeErr(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch hub.Code(err) {
	case hub.NotFound:
		status = http.StatusNotFound
	case hub.InvalidArgument:
		status = http.StatusBadRequest
	case hub.AlreadyExists:
		status = http.StatusConflict
	case hub.FailedPrecondition:
		status = http.StatusConflict
	case hub.PermissionDenied:
		status = http.StatusForbidden
	case hub.Unavailable, hub.DeadlineExceeded:
		status = http.StatusServiceUnavailable
	}
	writeError(w, status, err.Error())
}

func readBody(r *http.Request) (json.RawMessage, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(b) {
		return nil, errors.New("the body is not JSON")
	}
	return b, nil
}

func intParam(r *http.Request, name string, def int) int {
	if v := r.URL.Query().Get(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return def
}
