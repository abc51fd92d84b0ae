package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	"github.com/koder/eventhub/transports/rabbitmq"
)

// kdbModule is a stream module as the admin API sees it.
type kdbModule struct{ eng *engine.Engine }

func (m kdbModule) DLQ() ops.DLQ { return ops.DLQ{KDB: kdbstream.NewDLQ(m.eng, "events:dlq")} }
func (m kdbModule) StreamStatus(ctx context.Context) (*streams.StreamStatus, error) {
	st, err := kdbstream.ReadStatus(ctx, m.eng, "events")
	return &st, err
}

type rabbitModule struct{}

func (rabbitModule) DLQ() ops.DLQ { return ops.DLQ{Rabbit: &rabbitmq.Config{}} }

// TestW3_AdminDLQ drives the DLQ routes over a kdbstream dead-letter stream: the JSON
// keeps its field names and order, replay by id and of everything moves entries back
// to the source stream, purge empties it; a RabbitMQ DLQ refuses a purge by id.
func TestW3_AdminDLQ(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, time.Minute)
	eng, err := engine.Open(ctx, engine.Config{Driver: engine.DriverSQLite, DSN: filepath.Join(t.TempDir(), "hub.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	for _, id := range []string{"1-1", "2-1", "3-1"} {
		fields := streams.DeadLetterFields(map[string]string{"type": "a.b", "event_id": "evt_" + id}, "boom", 4, "events", "hub-in", id, streams.ReasonMaxDeliveries)
		if _, _, err := eng.XAdd(ctx, engine.Add{Stream: "events:dlq", ID: id, Values: fields}); err != nil {
			t.Fatal(err)
		}
	}
	h := (&Server{Transports: []Transport{
		{Name: "events", Type: "transport.kdbstream", Module: kdbModule{eng}},
		{Name: "queue", Type: "source.rabbitmq", Module: rabbitModule{}},
	}}).Handler()
	do := func(method, path, body string) (int, string) {
		r := httptest.NewRequest(method, "http://127.0.0.1:8081"+path, strings.NewReader(body))
		r.RemoteAddr = "127.0.0.1:1"
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}

	code, body := do(http.MethodGet, "/dlq/events?limit=2", "")
	if code != http.StatusOK || !strings.HasPrefix(body, "{\n  \"entries\": [\n    {\n      \"id\": \"1-1\",\n      \"time\": ") ||
		!strings.HasSuffix(body, "],\n  \"stream\": \"events:dlq\",\n  \"total\": 3\n}\n") {
		t.Fatalf("GET /dlq/events: %d\n%s", code, body)
	}
	var page struct{ Entries []map[string]any }
	if err := json.Unmarshal([]byte(body), &page); err != nil || len(page.Entries) != 2 {
		t.Fatalf("page: %v %+v", err, page)
	}
	var keys []string
	for k := range page.Entries[0] {
		keys = append(keys, k)
	}
	if len(keys) != 9 || page.Entries[0]["source_stream"] != "events" || page.Entries[0]["original_id"] != "1-1" || page.Entries[0]["deliveries"] != 4.0 {
		t.Errorf("entry fields: %v", page.Entries[0])
	}
	if code, body := do(http.MethodGet, "/dlq/events/9-9", ""); code != http.StatusNotFound {
		t.Errorf("GET a missing dead letter: %d %s", code, body)
	}
	if code, body := do(http.MethodPost, "/dlq/events/replay", `{"ids":["1-1"]}`); code != http.StatusOK || !strings.Contains(body, `"replayed": 1`) {
		t.Errorf("replay by id: %d %s", code, body)
	}
	if code, body := do(http.MethodPost, "/dlq/events/replay", `{"all":true}`); code != http.StatusOK || !strings.Contains(body, `"replayed": 2`) {
		t.Errorf("replay all: %d %s", code, body)
	}
	if n, _ := eng.XLen(ctx, "events"); n != 3 {
		t.Errorf("source stream after the replays: %d entries, want 3", n)
	}
	code, body = do(http.MethodGet, "/transports", "")
	if code != http.StatusOK || !strings.Contains(body, `"status": {`+"\n"+`      "stream": "events",`+"\n"+`      "length": 3,`) {
		t.Errorf("GET /transports: %d\n%s", code, body)
	}
	if code, body := do(http.MethodPost, "/dlq/queue/purge", `{"ids":["x"]}`); code != http.StatusBadRequest || !strings.Contains(body, "purged whole") {
		t.Errorf("RabbitMQ purge by id: %d %s", code, body)
	}
	if code, _ := do(http.MethodPost, "/dlq/events/purge", `{}`); code != http.StatusBadRequest {
		t.Errorf("purge without ids or all: %d", code)
	}
}
