package problem

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/koder/eventhub/hub"
)

type fieldErr struct{}

func (fieldErr) Error() string         { return "denied" }
func (fieldErr) HubCode() int          { return int(hub.PermissionDenied) }
func (fieldErr) ProblemField() string  { return "tenantid" }
func (fieldErr) ProblemAnchor() string { return "api-keys" }
func (fieldErr) ProblemStatus() int    { return http.StatusForbidden }

func TestSEC_ProblemStatus(t *testing.T) {
	t.Parallel()
	for code, want := range map[hub.ErrorCode]int{
		hub.OK: 200, hub.InvalidArgument: 400, hub.Unauthenticated: 401, hub.PermissionDenied: 403,
		hub.NotFound: 404, hub.AlreadyExists: 409, hub.FailedPrecondition: 409, hub.ResourceExhausted: 429,
		hub.Unavailable: 503, hub.DeadlineExceeded: 504, hub.Canceled: 499, hub.Internal: 500, hub.Unknown: 500,
	} {
		if got := Status(code); got != want {
			t.Errorf("%s: %d, want %d", code, got, want)
		}
	}
}

func TestSEC_ProblemFromError(t *testing.T) {
	t.Parallel()
	p := FromError(fieldErr{})
	if p.Status != 403 || p.Field != "tenantid" || p.Type != TypeBase+"api-keys" || p.Title != "Forbidden" || p.Detail != "denied" {
		t.Fatalf("%+v", p)
	}
	internal := FromError(errors.New("pq: password authentication failed for user hub"))
	if internal.Status != 500 || internal.Detail != "internal error" || internal.Type != "about:blank" {
		t.Fatalf("an internal error leaks its message: %+v", internal)
	}
	down := FromError(hub.Errorf(hub.Unavailable, "auth: get key: dial tcp 10.0.0.5:5432: connection refused"))
	if down.Status != 503 || down.Detail != "temporarily unavailable; retry later" {
		t.Fatalf("an unavailable database leaks its address: %+v", down)
	}
	rec := httptest.NewRecorder()
	WriteError(rec, hub.Errorf(hub.NotFound, "endpoint ep_1 not found"))
	var got Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 404 || got.Status != 404 ||
		rec.Header().Get("Content-Type") != ContentType || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v %+v %v", rec.Code, rec.Header(), got, err)
	}
}
