package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// request is one request a test receiver got.
type request struct {
	path   string
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a local HTTP receiver whose answer a test sets per request.
type receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	got     []request
	respond func(n int, r request) (status int, h http.Header, body string) // n: 1-based request count
	arrived chan request                                                    // every request, if non-nil
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{respond: func(int, request) (int, http.Header, string) { return 204, nil, "" }}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := request{path: r.URL.Path, header: r.Header.Clone(), body: body, at: time.Now()}
		rc.mu.Lock()
		rc.got = append(rc.got, req)
		n, respond, arrived := len(rc.got), rc.respond, rc.arrived
		rc.mu.Unlock()
		if arrived != nil {
			select {
			case arrived <- req:
			case <-r.Context().Done():
				return
			}
		}
		status, h, b := respond(n, req)
		for k, v := range h {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, b)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) url(path string) string { return rc.srv.URL + path }

func (rc *receiver) setRespond(f func(n int, r request) (int, http.Header, string)) {
	rc.mu.Lock()
	rc.respond = f
	rc.mu.Unlock()
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.got...)
}

// count returns how many requests arrived, optionally only on path.
func (rc *receiver) count(path string) int {
	n := 0
	for _, r := range rc.requests() {
		if path == "" || r.path == path {
			n++
		}
	}
	return n
}

// testBundle is a started transport on a fresh ledger with a local receiver.
type testBundle struct {
	tr   *Transport
	l    *ledger.Ledger
	recv *receiver
	reg  *prometheus.Registry
	ctx  context.Context
}

// testConfig shrinks every wait for tests and allow-lists the loopback receivers.
func testConfig() Config {
	return Config{
		Allow:          []string{"127.0.0.1"},
		RetrySchedule:  []time.Duration{10 * time.Millisecond, 10 * time.Millisecond},
		Jitter:         -1,
		AttemptTimeout: 5 * time.Second,
		BreakerPause:   time.Hour, // tests of the breaker shorten it
		Workers:        20,
	}
}

func setup(t *testing.T, b ledger.Backend, change func(*Config)) *testBundle {
	t.Helper()
	cfg := testConfig()
	if change != nil {
		change(&cfg)
	}
	return setupWith(t, b, cfg, ledger.Config{}, true)
}

// setupWith opens a ledger with lcfg, builds the transport and, when start, starts
// the ledger.
func setupWith(t *testing.T, b ledger.Backend, cfg Config, lcfg ledger.Config, start bool) *testBundle {
	t.Helper()
	ctx := testenv.Context(t, 60*time.Second)
	l := ledgertest.Open(t, b, lcfg)
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	if cfg.Logger == nil {
		cfg.Logger = ledgertest.Logger(t)
	}
	tr, err := New(ctx, cfg, l)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if start {
		if err := l.Start(ctx); err != nil {
			t.Fatalf("ledger start: %v", err)
		}
	}
	// Stop before the ledger's own cleanup closes it, so no job outlives the test.
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = l.Stop(sctx)
	})
	return &testBundle{tr: tr, l: l, recv: newReceiver(t), reg: reg, ctx: ctx}
}

// endpoint registers an endpoint on the receiver at path.
func (tb *testBundle) endpoint(t *testing.T, path string, patterns ...string) *Endpoint {
	t.Helper()
	if len(patterns) == 0 {
		patterns = []string{"#"}
	}
	ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url(path), Patterns: patterns})
	if err != nil {
		t.Fatalf("CreateEndpoint: %v", err)
	}
	return ep
}

func newEvent(t testing.TB, typ string) *cloudevent.Event {
	t.Helper()
	ev := cloudevent.New("/test", typ)
	ev.SetTenantID("t1")
	if err := ev.SetData("application/json", map[string]any{"n": 1, "s": "é"}); err != nil {
		t.Fatal(err)
	}
	return ev
}

func (tb *testBundle) send(t *testing.T, evs ...*cloudevent.Event) {
	t.Helper()
	if err := tb.tr.Send(tb.ctx, evs); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

// deliveries lists the deliveries of an endpoint (all when id is "").
func (tb *testBundle) deliveries(t *testing.T, f DeliveryFilter) []*Delivery {
	t.Helper()
	ds, err := tb.tr.Deliveries(tb.ctx, f)
	if err != nil {
		t.Fatalf("Deliveries: %v", err)
	}
	return ds
}

// waitStates waits until every delivery of f is in state want and there are n.
func (tb *testBundle) waitStates(t *testing.T, f DeliveryFilter, n int, want DeliveryState) []*Delivery {
	t.Helper()
	var ds []*Delivery
	testenv.WaitFor(t, 30*time.Second, "deliveries "+string(want), func() bool {
		ds = tb.deliveries(t, f)
		if len(ds) != n {
			return false
		}
		for _, d := range ds {
			if d.State != want {
				return false
			}
		}
		return true
	})
	return ds
}

func (tb *testBundle) waitBreaker(t *testing.T, id string, want BreakerState) BreakerStatus {
	t.Helper()
	return tb.waitBreakerWhere(t, id, "breaker "+string(want), func(s BreakerStatus) bool { return s.State == want })
}

// waitBreakerWhere polls the breaker until ok holds. A test that waits through a short
// state (an open pause) waits on a counter instead of the state, so a slow poll on a
// loaded machine cannot miss it.
func (tb *testBundle) waitBreakerWhere(t *testing.T, id, what string, ok func(BreakerStatus) bool) BreakerStatus {
	t.Helper()
	var s BreakerStatus
	testenv.WaitFor(t, 30*time.Second, what, func() bool {
		var err error
		s, err = tb.tr.Breaker(tb.ctx, id)
		if err != nil {
			t.Fatalf("Breaker: %v", err)
		}
		return ok(s)
	})
	return s
}

// gauge reads a gathered metric value with the given label subset, -1 when absent.
func gauge(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for k, v := range labels {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			switch {
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

func ids(rs []request) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.header.Get(IDHeader))
	}
	return out
}

// hmacHex and hmacB64 compute the expected signatures directly with crypto/hmac, apart
// from the package's signing code.
func hmacHex(key, msg string) string {
	h := hmac.New(sha256.New, []byte(key))
	h.Write([]byte(msg))
	return hex.EncodeToString(h.Sum(nil))
}

func hmacB64(key []byte, msg string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}
