package ui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/admin"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/transports/webhook"
)

// BenchmarkUI_Pages renders the console's list pages over a ledger of 100 000
// deliveries (PostgreSQL and SQLite), each beside the admin API's JSON for the same
// page (base_api), so `make bench` prints how much the HTML costs over the query. The
// ms/page metric is the page's render time as an operator waits for it.
func BenchmarkUI_Pages(b *testing.B) {
	for _, backend := range []ledger.Backend{ledger.Postgres, ledger.SQLite} {
		b.Run(backend.String(), func(b *testing.B) {
			env := benchEnvFor(b, backend)
			for _, pg := range env.pages {
				b.Run(pg.name, func(b *testing.B) {
					b.Run("hub", func(b *testing.B) { env.serve(b, env.console, pg.ui) })
					b.Run("base_api", func(b *testing.B) { env.serve(b, env.api, pg.api) })
				})
			}
		})
	}
}

// benchDeliveries is the size of the ledger the pages run over.
const benchDeliveries = 100_000

type benchPage struct{ name, ui, api string }

type benchEnv struct {
	console, api http.Handler
	cookie       *http.Cookie
	pages        []benchPage
}

var (
	benchMu   sync.Mutex
	benchEnvs = map[ledger.Backend]*benchEnv{}
	benchDone []func()
)

// TestMain drops the benchmarks' databases after the run (they are built once per
// backend and shared by every -count round).
func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range benchDone {
		f()
	}
	os.Exit(code)
}

func (e *benchEnv) serve(b *testing.B, h http.Handler, path string) {
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host, req.RemoteAddr = "127.0.0.1:8081", "127.0.0.1:50000"
		req.AddCookie(e.cookie)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d\n%.500s", path, rec.Code, rec.Body.String())
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/page")
}

type whModule struct{ t *webhook.Transport }

func (m whModule) Webhook() *webhook.Transport { return m.t }

// benchEnvFor builds (once per backend) a ledger with benchDeliveries deliveries: 99%
// delivered, 1% dead, spread over two endpoints of two tenants and three event types.
func benchEnvFor(b *testing.B, backend ledger.Backend) *benchEnv {
	benchMu.Lock()
	defer benchMu.Unlock()
	if e := benchEnvs[backend]; e != nil {
		return e
	}
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := ledger.Config{Logger: quiet}
	switch backend {
	case ledger.Postgres:
		cfg.DSN = testenv.PostgresURL(b)
		cfg.Schema = "uibench_" + strings.ToLower(ulid.Make().String())
		dsn, schema := cfg.DSN, cfg.Schema
		benchDone = append(benchDone, func() {
			if conn, err := pgx.Connect(context.Background(), dsn); err == nil {
				_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
				_ = conn.Close(context.Background())
			}
		})
	case ledger.SQLite:
		dir, err := os.MkdirTemp("", "uibench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDone = append(benchDone, func() { _ = os.RemoveAll(dir) })
		cfg.DSN = "sqlite://" + filepath.Join(dir, "ledger.db")
	}
	l, err := ledger.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	benchDone = append([]func(){func() { _ = l.Close() }}, benchDone...)
	t, err := webhook.New(ctx, webhook.Config{NoWork: true, Allow: []string{"127.0.0.1"}, Logger: quiet}, l)
	if err != nil {
		b.Fatal(err)
	}
	var eps []*webhook.Endpoint
	for _, tenant := range []string{"acme", "globex"} {
		ep, err := t.CreateEndpoint(ctx, webhook.EndpointSpec{URL: "http://127.0.0.1:9/" + tenant, Patterns: []string{"#"}, TenantID: tenant})
		if err != nil {
			b.Fatal(err)
		}
		eps = append(eps, ep)
	}
	types := []string{"order.created", "order.paid", "user.signed_up"}
	start := time.Now()
	const batch = 1000
	for i := 0; i < benchDeliveries/len(eps); i += batch {
		evs := make([]*cloudevent.Event, 0, batch)
		for j := range batch {
			ev := cloudevent.New("/bench", types[(i+j)%len(types)])
			ev.SetTenantID([]string{"acme", "globex"}[(i+j)%2])
			_ = ev.SetData("application/json", map[string]any{"n": i + j, "note": "a payload of a typical size, some text and a few numbers"})
			evs = append(evs, ev)
		}
		// Each event goes to its tenant's endpoint: one delivery per event.
		if err := t.Send(ctx, evs); err != nil {
			b.Fatal(err)
		}
	}
	// Finish them in bulk: the ledger's own columns, as River leaves finished jobs.
	db, table := l.DB(), l.Table("river_job")
	now := "CURRENT_TIMESTAMP"
	for _, q := range []string{
		fmt.Sprintf(`UPDATE %s SET state = 'completed', attempt = 1, finalized_at = %s, attempted_at = %s WHERE kind = 'webhook_delivery' AND id %% 100 <> 7`, table, now, now),
		fmt.Sprintf(`UPDATE %s SET state = 'discarded', attempt = 6, finalized_at = %s, attempted_at = %s WHERE kind = 'webhook_delivery' AND id %% 100 = 7`, table, now, now),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	if backend == ledger.Postgres { // the statistics autovacuum would gather on a live database
		if _, err := db.ExecContext(ctx, "ANALYZE "+table); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: %d deliveries in %s", backend, benchDeliveries, time.Since(start).Round(time.Millisecond))

	srv := &admin.Server{Logger: quiet, Transports: []admin.Transport{{Name: "webhooks", Type: "transport.webhook", Transport: t, Module: whModule{t}}}}
	api := srv.Handler()
	c, err := New(Config{Admin: srv, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	rec := httptest.NewRecorder()
	c.sessions.create(rec, httptest.NewRequest(http.MethodGet, "/ui/", nil), auth.Principal{Kind: auth.KindLoopback, ID: "bench", Scopes: auth.AllScopes})
	cookie := rec.Result().Cookies()[0]

	page, err := t.DeliveryPage(ctx, webhook.DeliveryQuery{})
	if err != nil || len(page.Deliveries) == 0 {
		b.Fatalf("no deliveries: %v", err)
	}
	newest := page.Deliveries[0].ID
	mid := strconv.FormatInt(newest/2, 10)
	one := strconv.FormatInt(newest-1, 10)
	ep := eps[0].ID
	pages := []benchPage{
		{"deliveries", "/ui/deliveries", "/deliveries/page"},
		{"deliveries_deep", "/ui/deliveries?before=" + mid, "/deliveries/page?before=" + mid},
		{"deliveries_dead", "/ui/deliveries?state=dead", "/deliveries/page?state=dead"},
		{"deliveries_type", "/ui/deliveries?type=order.paid&endpoint=" + ep, "/deliveries/page?type=order.paid&endpoint=" + ep},
		{"deliveries_pattern", "/ui/deliveries?type=user.%2A", "/deliveries/page?type=user.%2A"},
		{"delivery", "/ui/deliveries/" + one, "/deliveries/" + one},
		{"endpoints", "/ui/endpoints", "/endpoints"},
		{"endpoint", "/ui/endpoints/" + ep, "/endpoints/" + ep + "/breaker"},
	}
	e := &benchEnv{console: c, api: api, cookie: cookie, pages: pages}
	benchEnvs[backend] = e
	return e
}
