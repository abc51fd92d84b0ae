// Package admin is the hub binary's operations API: health and readiness, routes,
// transport status, DLQs, webhook endpoints and deliveries, the outbox, API keys, link
// tokens, the audit trail, secrets at rest, and Prometheus metrics. It adds no
// behaviour: every operation is a library call behind the ops interfaces, and every
// request passes the access layer (access.go) first.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/problem"
	"github.com/koder/eventhub/outbox"
	"github.com/koder/eventhub/secrets"
)

// Limits and timeouts of the API.
const (
	// DefaultListLimit is how many entries a listing (DLQ, dead outbox rows) returns
	// without ?limit=: a screenful an operator reads, and a reply that stays small
	// however large the store behind it grew.
	DefaultListLimit = 100
	// MaxBodyBytes caps a request body: the largest (a resend of many ids) is a few
	// kilobytes, so 1 MiB only stops a client that sends garbage.
	MaxBodyBytes = 1 << 20
	// ReadyTimeout bounds /readyz's health checks, below the usual 5 s probe timeout of
	// orchestrators, so a hung transport reports "degraded" instead of timing the probe out.
	ReadyTimeout = 3 * time.Second
	// StatusTimeout bounds GET /transports (health and status of every transport): a
	// down Redis answers within the client's own dial timeout, well inside it.
	StatusTimeout = 5 * time.Second
)

// Route describes one configured route for GET /routes.
type Route struct {
	Pattern    string   `json:"pattern"`
	To         []string `json:"to"`
	Delivery   string   `json:"delivery"`
	Attempts   int      `json:"attempts,omitempty"`
	Backoff    string   `json:"backoff,omitempty"`
	BackoffMax string   `json:"max_backoff,omitempty"`
}

// Transport is one transport the admin API reports on and operates.
type Transport struct {
	Name      string
	Type      string // module ID
	Transport hub.Transport
	Module    any // the module: may implement ops.StreamStatuser, ops.BusStatuser, ops.DLQProvider, ops.WebhookProvider
}

// Server is the admin API handler.
type Server struct {
	// Access is who may call the API and what each caller sees (access.go): admin and
	// link tokens, the request guard, the concurrency bound.
	Access
	// Keys is the API key store (/keys); nil without a store.
	Keys *auth.KeyStore
	// Audit records every admin action; nil: slog records only, through Logger.
	Audit *auth.AuditLog
	// AuditStore serves GET /audit; nil without a store.
	AuditStore *auth.AuditStore
	// Keyring encrypts secrets at rest (/secrets); nil when no key is configured.
	Keyring *secrets.Keyring

	Routes     []Route
	Transports []Transport
	// Sources are listed for DLQ operations (a consumer group's DLQ belongs to its source).
	Sources  []Transport
	Outbox   *outbox.Outbox // nil when no route uses the outbox
	Gatherer prometheus.Gatherer
	Logger   *slog.Logger
	// Ready reports whether the hub finished starting (readiness before transports).
	Ready func() bool
	// Console, when set, serves /ui/ (the web console and tenant portal) beside the
	// API. It runs its own access layer (sessions, CSRF tokens, HTML forms), so it is
	// mounted outside the API's.
	Console http.Handler

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
	s.keyRoutes(mux)
	s.auditRoutes(mux)
	s.secretsRoutes(mux)
	s.linkRoutes(mux)
	s.consoleRoutes(mux)
	if s.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(s.Gatherer, promhttp.HandlerOpts{}))
	}
	s.mux = mux
	api := s.protect(mux)
	if s.Console == nil {
		return api
	}
	top := http.NewServeMux()
	top.Handle("/ui/", s.Console)
	top.Handle("/ui", http.RedirectHandler("/ui/", http.StatusFound))
	top.Handle("/", api)
	return top
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.Ready != nil && !s.Ready() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "starting"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
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
	ctx, cancel := context.WithTimeout(r.Context(), StatusTimeout)
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
		if v, ok, err := status(ctx, t.Module); ok {
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

// status is a module's state as the library reports it, when the module has one.
func status(ctx context.Context, mod any) (v any, ok bool, err error) {
	switch m := mod.(type) {
	case ops.BusStatuser:
		v, err = m.BusStatus(ctx)
	case ops.StreamStatuser:
		v, err = m.StreamStatus(ctx)
	case ops.WebhookProvider:
		if t := m.Webhook(); t != nil {
			v, err = t.Status(ctx)
		}
	default:
		return nil, false, nil
	}
	return v, true, err
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
	problem.Write(w, problem.New(status, "", detail))
}

// writeErr answers a library error as a problem document, its status from its hub code
// (internal/problem's table, shared with the ingress and the request guards): 401 with
// a challenge, 403 naming the field at fault, 429 with Retry-After. A deadline is 503
// here (the API's own bound ran out, not a gateway's); a server-side error's detail is
// generic, since its message may name a database host.
func writeErr(w http.ResponseWriter, err error) {
	if hub.Code(err) == hub.DeadlineExceeded {
		writeError(w, http.StatusServiceUnavailable, "timed out; retry later")
		return
	}
	auth.WriteError(w, Realm, err)
}

func readBody(r *http.Request) (json.RawMessage, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes))
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

// reply writes v, or err's problem when err is set.
func reply(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
