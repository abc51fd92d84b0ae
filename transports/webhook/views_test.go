package webhook

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// TestH1_EndpointViews: the operator views list endpoints by id in pages, never show a
// secret except in the view of a create or rotation, and report every breaker.
func TestH1_EndpointViews(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		var ids []string
		for _, p := range []string{"/a", "/b", "/c"} {
			ids = append(ids, tb.endpoint(t, p, "user.*").ID)
		}

		all, err := tb.tr.ListEndpoints(tb.ctx, Page{})
		if err != nil || len(all) != 3 {
			t.Fatalf("ListEndpoints(all) = %d, %v", len(all), err)
		}
		for i, v := range all {
			if v.ID != ids[i] || v.Secret != "" || v.Secrets != 1 || v.Types[0] != "user.*" || !v.Enabled {
				t.Errorf("view %d = %+v", i, v)
			}
		}
		first, err := tb.tr.ListEndpoints(tb.ctx, Page{Limit: 2})
		if err != nil || len(first) != 2 || first[1].ID != ids[1] {
			t.Fatalf("first page = %+v, %v", first, err)
		}
		rest, err := tb.tr.ListEndpoints(tb.ctx, Page{After: first[1].ID, Limit: 2})
		if err != nil || len(rest) != 1 || rest[0].ID != ids[2] {
			t.Fatalf("second page = %+v, %v", rest, err)
		}
		if none, err := tb.tr.ListEndpoints(tb.ctx, Page{After: ids[2]}); err != nil || none == nil || len(none) != 0 {
			t.Fatalf("past the end = %#v, %v; want an empty, non-nil list", none, err)
		}

		ep, err := tb.tr.Endpoint(tb.ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(ep.View()); strings.Contains(string(b), ep.Secrets[0].Value) {
			t.Errorf("View leaks the secret: %s", b)
		}
		if v := ep.ViewWithSecret(); v.Secret != ep.Secrets[0].Value {
			t.Errorf("ViewWithSecret().Secret = %q", v.Secret)
		}

		st, err := tb.tr.Status(tb.ctx)
		if err != nil || len(st.Breakers) != 3 || st.Breakers[0].State != BreakerClosed {
			t.Fatalf("Status = %+v, %v", st, err)
		}
	})
}
