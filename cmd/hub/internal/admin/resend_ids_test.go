package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// TestH3_ResendTakesTheIDsDeliveriesLists pins that POST /deliveries/resend reads ids in
// the form GET /deliveries writes them (JSON numbers), keeps the string form, and answers
// anything else with a 400 problem document before resending anything.
func TestH3_ResendTakesTheIDsDeliveriesLists(t *testing.T) {
	t.Parallel()
	decode := func(body string) (resendBody, *httptest.ResponseRecorder, bool) {
		w := httptest.NewRecorder()
		var b resendBody
		ok := decodeBody(w, httptest.NewRequest(http.MethodPost, "/deliveries/resend", strings.NewReader(body)), &b)
		return b, w, ok
	}
	t.Run("NumbersAsListed", func(t *testing.T) {
		t.Parallel()
		// What GET /deliveries returns, fed back unchanged.
		listed, _ := json.Marshal([]struct {
			ID int64 `json:"id"`
		}{{42}, {9007199254740993}})
		var rows []struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(listed, &rows)
		body := `{"ids":[` + string(rows[0].ID) + `,` + string(rows[1].ID) + `]}`
		b, w, ok := decode(body)
		if !ok || !reflect.DeepEqual(b.IDs, []deliveryID{42, 9007199254740993}) {
			t.Fatalf("%s: ok %v ids %v (%d %s)", body, ok, b.IDs, w.Code, w.Body)
		}
	})
	t.Run("StringsStillAccepted", func(t *testing.T) {
		t.Parallel()
		b, _, ok := decode(`{"ids":["42","43"]}`)
		if !ok || !reflect.DeepEqual(b.IDs, []deliveryID{42, 43}) {
			t.Fatalf("ok %v ids %v", ok, b.IDs)
		}
	})
	t.Run("AnythingElseIs400", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{`{"ids":[0]}`, `{"ids":[-1]}`, `{"ids":[1.5]}`, `{"ids":["x"]}`, `{"ids":[true]}`,
			`{"ids":[null]}`, `{"ids":["1e3"]}`, `{"ids":[99999999999999999999]}`, `{"ids":42}`} {
			_, w, ok := decode(body)
			if ok || w.Code != http.StatusBadRequest || w.Header().Get("Content-Type") != "application/problem+json" {
				t.Errorf("%s: ok %v status %d %s", body, ok, w.Code, w.Body)
				continue
			}
			var p struct {
				Status int    `json:"status"`
				Detail string `json:"detail"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != 400 || p.Detail == "" {
				t.Errorf("%s: problem %s", body, w.Body)
			}
		}
	})
}

// FuzzResendBody: any body either decodes to positive ids or is a 400 problem.
func FuzzResendBody(f *testing.F) {
	for _, s := range []string{`{"ids":[42]}`, `{"ids":["42"]}`, `{"ids":[0]}`, `{"ids":[1e3]}`, `{"ids":["\u0034\u0032"]}`, `{"endpoint":"ep_1","since":"2026-01-01T00:00:00Z"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		w := httptest.NewRecorder()
		var b resendBody
		if decodeBody(w, httptest.NewRequest(http.MethodPost, "/deliveries/resend", strings.NewReader(body)), &b) {
			for _, id := range b.IDs {
				if id < 1 {
					t.Fatalf("%q decoded to id %d", body, id)
				}
			}
			return
		}
		if w.Code != http.StatusBadRequest || w.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%q: status %d %s", body, w.Code, w.Body)
		}
	})
}
