package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// TestSEC_AdminDLQTenantScope: a tenant-scoped token sees, replays and purges the dead
// letters of its own tenant only (their R2 tenant_id field); another tenant's entry is
// 404; a RabbitMQ DLQ, which cannot be read per tenant, is 403; the operator still sees
// everything.
func TestSEC_AdminDLQTenantScope(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, time.Minute)
	eng, err := engine.Open(ctx, engine.Config{Driver: engine.DriverSQLite, DSN: filepath.Join(t.TempDir(), "hub.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	for i, tenant := range []string{"acme", "globex", "acme", "globex", "acme"} {
		id := string(rune('1'+i)) + "-1"
		fields := streams.DeadLetterFields(map[string]string{"type": "a.b", "event_id": "evt_" + id, "tenant_id": tenant}, "boom", 4, "events", "hub-in", id, streams.ReasonMaxDeliveries)
		if _, _, err := eng.XAdd(ctx, engine.Add{Stream: "events:dlq", ID: id, Values: fields}); err != nil {
			t.Fatal(err)
		}
	}
	toks, err := auth.ParseAdminTokens("operator-token-0123456789abcdef\nacme-token-0123456789abcdef tenant=acme\n", "tokens")
	if err != nil {
		t.Fatal(err)
	}
	h := (&Server{Access: Access{Tokens: toks}, Transports: []Transport{
		{Name: "events", Type: "transport.kdbstream", Module: kdbModule{eng}},
		{Name: "queue", Type: "source.rabbitmq", Module: rabbitModule{}},
	}}).Handler()
	do := func(tok, method, path, body string) (int, string) {
		r := httptest.NewRequest(method, "http://127.0.0.1:8081"+path, strings.NewReader(body))
		r.RemoteAddr = "127.0.0.1:1"
		r.Header.Set("Authorization", "Bearer "+tok)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	const acme, ops = "acme-token-0123456789abcdef", "operator-token-0123456789abcdef"
	ids := func(body string) []string {
		var page struct {
			Entries []struct{ ID string }
			Total   int
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		var out []string
		for _, e := range page.Entries {
			out = append(out, e.ID)
		}
		return out
	}

	code, body := do(acme, "GET", "/dlq/events?limit=2", "")
	if got := ids(body); code != 200 || len(got) != 2 || got[0] != "1-1" || got[1] != "3-1" || !strings.Contains(body, `"total": 3`) {
		t.Fatalf("acme's page: %d %s", code, body)
	}
	if code, body := do(ops, "GET", "/dlq/events", ""); code != 200 || len(ids(body)) != 5 {
		t.Errorf("the operator's page: %d %s", code, body)
	}
	if code, _ := do(acme, "GET", "/dlq/events/2-1", ""); code != http.StatusNotFound {
		t.Errorf("acme reads globex's dead letter: %d", code)
	}
	if code, _ := do(acme, "GET", "/dlq/events/1-1", ""); code != http.StatusOK {
		t.Errorf("acme reads its dead letter: %d", code)
	}
	if code, body := do(acme, "POST", "/dlq/events/replay", `{"ids":["2-1"]}`); code != http.StatusNotFound {
		t.Errorf("acme replays globex's dead letter: %d %s", code, body)
	}
	if code, body := do(acme, "POST", "/dlq/events/purge", `{"ids":["4-1"]}`); code != http.StatusNotFound {
		t.Errorf("acme purges globex's dead letter: %d %s", code, body)
	}
	if code, body := do(acme, "POST", "/dlq/events/replay", `{"ids":["1-1"]}`); code != 200 || !strings.Contains(body, `"replayed": 1`) {
		t.Errorf("acme replays its dead letter: %d %s", code, body)
	}
	if code, body := do(acme, "POST", "/dlq/events/purge", `{"all":true}`); code != 200 || !strings.Contains(body, `": 2`) {
		t.Errorf("acme purges all of its own: %d %s", code, body)
	}
	if code, body := do(ops, "GET", "/dlq/events", ""); code != 200 || strings.Join(ids(body), ",") != "2-1,4-1" {
		t.Errorf("after acme's replay and purge the operator sees %d %s, want globex's two", code, body)
	}
	if code, _ := do(acme, "GET", "/dlq/queue", ""); code != http.StatusForbidden {
		t.Errorf("acme reads a RabbitMQ DLQ: %d, want 403", code)
	}
}
