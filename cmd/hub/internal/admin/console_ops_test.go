package admin

import (
	"context"
	"net/url"
	"testing"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/hub"
)

// FuzzParseDeliveryQuery: any query either parses or is InvalidArgument, and a
// tenant-scoped caller's query is always pinned to its own tenant, whatever it asks.
func FuzzParseDeliveryQuery(f *testing.F) {
	for _, s := range []string{"state=dead&endpoint=ep_1&type=user.*&tenant=globex&since=2026-01-01T00:00:00Z&before=42&limit=10",
		"state=bogus", "before=-1", "limit=x", "since=yesterday", "type=a..b", "tenant=&tenant=x"} {
		f.Add(s)
	}
	scoped := auth.NewContext(context.Background(), auth.Principal{Kind: auth.KindLink, ID: "l1", Tenant: "acme", Scopes: []auth.Scope{auth.ScopeRead}})
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		if _, err := ParseDeliveryQuery(context.Background(), q); err != nil && hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("%q: %v (code %v), want InvalidArgument", raw, err, hub.Code(err))
		}
		dq, err := ParseDeliveryQuery(scoped, q)
		if err == nil && dq.TenantID != "acme" {
			t.Fatalf("%q: a tenant-scoped query runs for tenant %q", raw, dq.TenantID)
		}
	})
}
