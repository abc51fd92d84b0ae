package ingress

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/ledger"
)

// TestSEC_IngressAccess: the access layer around the handler, in process: a credential
// is checked before the body is read, a batch with one event of another tenant is
// refused whole naming that event's field, a batch is charged per event (over the burst
// it can never pass, so no Retry-After), a foreign Host is refused, and a loopback client
// without a credential passes when the listener allows it.
func TestSEC_IngressAccess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{DSN: "sqlite://" + filepath.Join(t.TempDir(), "hub.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	keys, err := auth.NewKeyStore(ctx, l.DB(), auth.KeyStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := keys.Create(ctx, auth.KeySpec{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := auth.NewGuard(auth.GuardConfig{ListenAddr: "127.0.0.1:8080"})
	lim, _ := auth.NewRateLimiter(auth.RateLimitConfig{PerKey: 0.001, KeyBurst: 2})
	b := setup(t)
	acc := &Access{Guard: g, Authenticator: &auth.Authenticator{Keys: keys, AllowLoopback: true}, Limits: lim}
	b.handler.Authorize = acc.Authorize
	h := acc.Middleware(b.handler)
	do := func(hdr map[string]string, ct, body string) (*httptest.ResponseRecorder, map[string]any) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/events", strings.NewReader(body))
		r.RemoteAddr = "10.0.0.9:5000"
		r.Header.Set("Content-Type", ct)
		for k, v := range hdr {
			if k == "Host" {
				r.Host = v
				continue
			}
			if k == "RemoteAddr" {
				r.RemoteAddr = v
				continue
			}
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var p map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &p)
		return w, p
	}
	ev := func(id, tenant string) string {
		return strings.Replace(strings.Replace(validErased, "evt_1", id, 1), `"acme"`, `"`+tenant+`"`, 1)
	}
	bearer := map[string]string{"Authorization": "Bearer " + key}

	if w, p := do(nil, ContentTypeStructured, ev("evt_a", "acme")); w.Code != 401 || p["status"] != 401.0 {
		t.Errorf("a remote client without a credential: %d %v", w.Code, p)
	}
	if w, _ := do(map[string]string{"RemoteAddr": "127.0.0.1:5000"}, ContentTypeStructured, ev("evt_b", "globex")); w.Code != 202 {
		t.Errorf("a loopback client without a credential: %d %s", w.Code, w.Body)
	}
	batch := "[" + ev("evt_c", "acme") + "," + ev("evt_d", "globex") + "]"
	w, p := do(bearer, ContentTypeBatch, batch)
	if w.Code != 403 || p["field"] != "/1/tenantid" {
		t.Errorf("a batch with another tenant's event: %d %v", w.Code, p)
	}
	select {
	case e := <-b.received:
		if e.ID != "evt_b" {
			t.Errorf("published %s", e.ID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the loopback event was not published")
	}
	select {
	case e := <-b.received:
		t.Errorf("part of a refused batch was published: %s", e.ID)
	case <-time.After(100 * time.Millisecond):
	}
	if w, _ := do(bearer, ContentTypeBatch, "["+ev("evt_e", "acme")+","+ev("evt_f", "acme")+"]"); w.Code != 202 {
		t.Errorf("a batch within the burst: %d %s", w.Code, w.Body)
	}
	w, _ = do(bearer, ContentTypeStructured, ev("evt_g", "acme"))
	if w.Code != 429 || w.Header().Get("Retry-After") == "" {
		t.Errorf("over the rate: %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	w, _ = do(bearer, ContentTypeBatch, "["+ev("evt_h", "acme")+","+ev("evt_i", "acme")+","+ev("evt_j", "acme")+"]")
	if w.Code != 429 || w.Header().Get("Retry-After") != "" {
		t.Errorf("a batch over the burst: %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w, p := do(map[string]string{"Host": "evil.example", "RemoteAddr": "127.0.0.1:1"}, ContentTypeStructured, ev("evt_k", "acme")); w.Code != 403 || p["field"] != "Host" {
		t.Errorf("a foreign Host: %d %v", w.Code, p)
	}
}
