package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestListTableOutput: -o table prints one row per item with the command's columns
// (nested paths, lists joined, missing values as "-", long errors cut to one line),
// -o json stays the API's answer, an error answer stays JSON, a bad -o is a usage error.
func TestListTableOutput(t *testing.T) {
	t.Parallel()
	longErr := "webhook: POST https://example.com/hooks: status 503\n" + strings.Repeat("x", 200)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/deliveries":
			_, _ = w.Write([]byte(`[{"id":7,"endpoint_id":"ep_1","event_id":"evt_1","event_type":"a.b","state":"dead",
				"attempt":6,"last_status":503,"last_error":` + quoteJSON(longErr) + `},
				{"id":8,"endpoint_id":"ep_1","event_id":"evt_2","event_type":"a.b","state":"delivered","attempt":1,"last_status":200}]`))
		case "/dlq/redis":
			_, _ = w.Write([]byte(`{"entries":[{"id":"1-0","time":"2026-01-01T00:00:00Z","fields":{"type":"a.b","event_id":"evt_3"},
				"reason":"max_deliveries","deliveries":5,"error":"boom"}],"stream":"events:dlq","total":1}`))
		case "/dlq/amqp": // a RabbitMQ DLQ: a bare array, its own field names
			_, _ = w.Write([]byte(`[{"id":"evt_4","type":"a.c","reason":"malformed","error":"bad json","at":"2026-01-02T00:00:00Z",
				"retries":3,"event":{"id":"evt_4"}}]`))
		case "/endpoints":
			_, _ = w.Write([]byte(`[{"id":"ep_1","url":"https://example.com/hooks","types":["a.#","b.*"],"enabled":true,"created_at":"2026-01-01T00:00:00Z"}]`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"status":404,"title":"Not Found"}`))
		}
	}))
	t.Cleanup(admin.Close)
	vars := map[string]string{"HUB_ADMIN_URL": admin.URL}

	r := run(t, vars, "deliveries", "list", "-o", "table")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "ERROR") {
		t.Fatalf("want a header and 2 rows, got:\n%s", r.stdout)
	}
	if !strings.Contains(lines[1], "dead") || !strings.Contains(lines[1], "503") || !strings.HasSuffix(lines[1], "…") ||
		strings.Contains(lines[1], strings.Repeat("x", maxCell)) {
		t.Errorf("row 1 should hold the dead delivery with its error cut to %d characters: %q", maxCell, lines[1])
	}
	if !strings.HasSuffix(strings.TrimSpace(lines[2]), "-") {
		t.Errorf("row 2 has no error and should end with -: %q", lines[2])
	}

	r = run(t, vars, "dlq", "list", "redis", "-o", "table")
	if r.code != ExitOK || !strings.Contains(r.stdout, "evt_3") || !strings.Contains(r.stdout, "max_deliveries") {
		t.Errorf("dlq table (nested fields.event_id): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, vars, "dlq", "list", "amqp", "-o", "table")
	if fields := strings.Fields(strings.Split(r.stdout, "\n")[1]); r.code != ExitOK || len(fields) < 7 ||
		fields[1] != "2026-01-02T00:00:00Z" || fields[2] != "a.c" || fields[3] != "evt_4" || fields[5] != "3" {
		t.Errorf("RabbitMQ dlq table (the at, type, event.id and retries alternatives): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, vars, "endpoints", "list", "-o", "table")
	if r.code != ExitOK || !strings.Contains(r.stdout, "a.#,b.*") {
		t.Errorf("endpoints table (types joined): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, vars, "deliveries", "list")
	if r.code != ExitOK || !strings.Contains(r.stdout, `"last_status": 503`) {
		t.Errorf("default output should be the indented JSON answer: exit %d\n%s", r.code, r.stdout)
	}
	r = run(t, vars, "dlq", "list", "nosuch", "-o", "table")
	if r.code != ExitNotFound || !strings.Contains(r.stdout, `"status": 404`) {
		t.Errorf("an error answer should print as JSON: exit %d\n%s", r.code, r.stdout)
	}
	r = run(t, vars, "audit", "-o", "yaml")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "json or table") {
		t.Errorf("-o yaml: exit %d, want %d with a hint\n%s", r.code, ExitUsage, r.stderr)
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
