package ingress

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/schema"
)

type testBundle struct {
	hub      *hub.Hub
	handler  *Handler
	received chan *cloudevent.Event
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	reg := schema.Builtin()
	h, err := hub.New(hub.WithRegistry(reg), hub.WithCloseTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	tr, err := memtransport.New(memtransport.NewBroker(), memtransport.Config{Stream: "events"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	if err := h.Forward("#", tr); err != nil {
		t.Fatal(err)
	}
	b := &testBundle{hub: h, received: make(chan *cloudevent.Event, 100)}
	h.Subscribe("#", func(ctx context.Context, ev *cloudevent.Event) error { b.received <- ev; return nil })
	b.handler = &Handler{Publisher: h, Validator: reg, MaxBodyBytes: 4096, MaxBatch: 3}
	return b
}

const validErased = `{"specversion":"1.0","id":"evt_1","source":"/id","type":"identity.user.erased","tenantid":"acme",
 "datacontenttype":"application/json","data":{"erasure_id":"e1","user_id":"u1"}}`

func post(t *testing.T, h http.Handler, ct string, headers map[string]string, body string) (*httptest.ResponseRecorder, Problem) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/events", strings.NewReader(body))
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var p Problem
	if w.Code >= 400 {
		if got := w.Header().Get("Content-Type"); got != "application/problem+json" {
			t.Errorf("error Content-Type = %q, want application/problem+json", got)
		}
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
			t.Fatalf("problem body: %v: %s", err, w.Body)
		}
		if p.Status != w.Code {
			t.Errorf("problem status %d != response %d", p.Status, w.Code)
		}
	}
	return w, p
}

func pointers(p Problem) []string {
	var out []string
	for _, e := range p.Errors {
		out = append(out, e.Pointer)
	}
	return out
}

func TestIngress(t *testing.T) {
	t.Parallel()

	t.Run("StructuredAcceptedAfterPublish", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w, _ := post(t, b.handler, ContentTypeStructured, nil, validErased)
		if w.Code != http.StatusAccepted {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		// The in-process subscriber runs inside Publish: by the time the 202 is
		// written, the event has been published.
		select {
		case ev := <-b.received:
			if ev.ID != "evt_1" || ev.TenantID() != "acme" {
				t.Errorf("received %s tenant %q", ev.ID, ev.TenantID())
			}
		default:
			t.Fatal("202 before Publish returned")
		}
		var a Accepted
		_ = json.Unmarshal(w.Body.Bytes(), &a)
		if a.Accepted != 1 || a.IDs[0] != "evt_1" {
			t.Errorf("body %s", w.Body)
		}
	})

	t.Run("BinaryAccepted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w, _ := post(t, b.handler, "application/json", map[string]string{
			"ce-specversion": "1.0", "ce-id": "evt_b", "ce-source": "/id", "ce-type": "identity.user.erased", "ce-tenantid": "acme",
		}, `{"erasure_id":"e1"}`)
		if w.Code != http.StatusAccepted {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if ev := <-b.received; ev.ID != "evt_b" || string(ev.Data) != `{"erasure_id":"e1"}` {
			t.Errorf("received %s %s", ev.ID, ev.Data)
		}
	})

	t.Run("BatchAccepted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		two := "[" + validErased + "," + strings.Replace(validErased, "evt_1", "evt_2", 1) + "]"
		w, _ := post(t, b.handler, ContentTypeBatch, nil, two)
		if w.Code != http.StatusAccepted {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if len(b.received) != 2 {
			t.Errorf("received %d events, want 2", len(b.received))
		}
	})

	t.Run("InvalidEnvelopeNamesEveryField", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w, p := post(t, b.handler, ContentTypeStructured, nil, `{"specversion":"1.0","source":"/id","data":{}}`)
		if w.Code != http.StatusBadRequest {
			t.Fatalf("status %d", w.Code)
		}
		got := strings.Join(pointers(p), " ")
		for _, want := range []string{"/id", "/type", "/tenantid"} {
			if !strings.Contains(got, want) {
				t.Errorf("problem pointers %q lack %s", got, want)
			}
		}
		if len(b.received) != 0 {
			t.Error("an invalid event was published")
		}
	})

	t.Run("SchemaViolationNamesDataField", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		body := strings.Replace(validErased, `"erasure_id":"e1",`, `"erasure_id":"",`, 1)
		w, p := post(t, b.handler, ContentTypeStructured, nil, body)
		if w.Code != http.StatusBadRequest {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if len(p.Errors) != 1 || p.Errors[0].Pointer != "/data/erasure_id" || p.Errors[0].Code != schema.CodeInvalidEventData {
			t.Errorf("errors %+v", p.Errors)
		}
	})

	t.Run("EnvelopeAndDataProblemsTogether", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		body := strings.Replace(strings.Replace(validErased, `"tenantid":"acme",`, ``, 1), `"erasure_id":"e1",`, ``, 1)
		w, p := post(t, b.handler, ContentTypeStructured, nil, body)
		if got := strings.Join(pointers(p), " "); w.Code != http.StatusBadRequest || got != "/tenantid /data/erasure_id" {
			t.Errorf("status %d pointers %q", w.Code, got)
		}
		w, p = post(t, b.handler, ContentTypeBatch, nil, "["+validErased+","+body+"]")
		if got := strings.Join(pointers(p), " "); w.Code != http.StatusBadRequest || got != "/1/tenantid /1/data/erasure_id" {
			t.Errorf("batch: status %d pointers %q", w.Code, got)
		}
	})

	t.Run("BatchProblemsCarryTheIndex", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		badData := strings.Replace(validErased, `"erasure_id":"e1",`, ``, 1)
		noTenant := strings.Replace(validErased, `"tenantid":"acme",`, ``, 1)
		w, p := post(t, b.handler, ContentTypeBatch, nil, "["+validErased+","+noTenant+"]")
		if w.Code != http.StatusBadRequest || strings.Join(pointers(p), " ") != "/1/tenantid" {
			t.Errorf("envelope: status %d pointers %v", w.Code, pointers(p))
		}
		w, p = post(t, b.handler, ContentTypeBatch, nil, "["+validErased+","+badData+"]")
		if w.Code != http.StatusBadRequest || strings.Join(pointers(p), " ") != "/1/data/erasure_id" {
			t.Errorf("schema: status %d pointers %v", w.Code, pointers(p))
		}
		if len(b.received) != 0 {
			t.Error("part of an invalid batch was published")
		}
	})

	t.Run("UnknownMajorVersion", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		body := strings.Replace(validErased, `"tenantid":"acme",`, `"tenantid":"acme","dataversion":"9.0.0",`, 1)
		w, p := post(t, b.handler, ContentTypeStructured, nil, body)
		if w.Code != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Pointer != "/dataversion" {
			t.Errorf("status %d errors %+v", w.Code, p.Errors)
		}
	})

	t.Run("TooLarge", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		big := strings.Replace(validErased, `"user_id":"u1"`, `"user_id":"`+strings.Repeat("x", 5000)+`"`, 1)
		if w, _ := post(t, b.handler, ContentTypeStructured, nil, big); w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("body over limit: status %d", w.Code)
		}
		four := "[" + strings.Repeat(validErased+",", 3) + validErased + "]"
		if w, _ := post(t, b.handler, ContentTypeBatch, nil, four); w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("batch over limit: status %d", w.Code)
		}
	})

	t.Run("UnsupportedMediaType", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, ct := range []string{"text/plain", "", "application/cloudevents+xml", "application/json"} {
			if w, _ := post(t, b.handler, ct, nil, validErased); w.Code != http.StatusUnsupportedMediaType {
				t.Errorf("Content-Type %q: status %d, want 415", ct, w.Code)
			}
		}
	})

	t.Run("MethodNotAllowed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w := httptest.NewRecorder()
		b.handler.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/events", nil))
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "POST" {
			t.Errorf("status %d Allow %q", w.Code, w.Header().Get("Allow"))
		}
	})

	t.Run("ClosedHubIsUnavailable", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.hub.Close()
		w, _ := post(t, b.handler, ContentTypeStructured, nil, validErased)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
			t.Errorf("status %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
		}
	})
}
