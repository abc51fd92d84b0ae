package webhook

import (
	"net/http"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// TestSEC_WebhookTenantListings: the listings a tenant-scoped caller runs filter in the
// query: endpoints by their tenant, deliveries by the tenant of the endpoint they went
// to (an endpoint of every tenant belongs to the operator, not to the event's tenant),
// and a bulk resend touches only the tenant's deliveries.
func TestSEC_WebhookTenantListings(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		tb.recv.setRespond(func(int, request) (int, http.Header, string) { return 500, nil, "" })
		create := func(path, tenant string) *Endpoint {
			ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url(path), Patterns: []string{"#"}, TenantID: tenant})
			if err != nil {
				t.Fatal(err)
			}
			return ep
		}
		acme, globex, all := create("/acme", "acme"), create("/globex", "globex"), create("/all", "")

		for tenant, want := range map[string][]string{"acme": {acme.ID}, "globex": {globex.ID}, "": {acme.ID, globex.ID, all.ID}, "initech": nil} {
			vs, err := tb.tr.ListEndpoints(tb.ctx, Page{TenantID: tenant})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				got = append(got, v.ID)
			}
			if len(got) != len(want) || (len(want) > 0 && (got[0] != want[0] || got[len(got)-1] != want[len(want)-1])) {
				t.Errorf("ListEndpoints(tenant %q) = %v, want %v", tenant, got, want)
			}
		}

		ev := cloudevent.New("/test", "user.created")
		ev.SetTenantID("acme")
		if err := ev.SetData("application/json", map[string]any{"n": 1}); err != nil {
			t.Fatal(err)
		}
		tb.send(t, ev)
		ds := tb.deliveries(t, DeliveryFilter{})
		if len(ds) != 2 {
			t.Fatalf("deliveries = %d, want 2 (acme's endpoint and the operator's)", len(ds))
		}
		mine := tb.deliveries(t, DeliveryFilter{TenantID: "acme"})
		if len(mine) != 1 || mine[0].EndpointID != acme.ID || mine[0].TenantID != "acme" {
			t.Fatalf("acme's deliveries = %+v", mine)
		}
		if d := tb.deliveries(t, DeliveryFilter{TenantID: "globex"}); len(d) != 0 {
			t.Errorf("globex sees %d deliveries of an acme event", len(d))
		}
		if d := tb.deliveries(t, DeliveryFilter{TenantID: "acme", EndpointID: all.ID}); len(d) != 0 {
			t.Errorf("acme sees the operator endpoint's delivery: %+v", d)
		}
		if d, err := tb.tr.Delivery(tb.ctx, mine[0].ID); err != nil || d.TenantID != "acme" {
			t.Errorf("Delivery = %+v, %v", d, err)
		}

		// Both fail (the receiver answers 500), then a tenant's bulk resend touches its own.
		tb.waitStates(t, DeliveryFilter{}, 2, DeliveryDead)
		n, err := tb.tr.ResendDead(tb.ctx, ResendFilter{TenantID: "globex"})
		if err != nil || n != 0 {
			t.Errorf("globex resend = %d, %v", n, err)
		}
		n, err = tb.tr.ResendDead(tb.ctx, ResendFilter{TenantID: "acme"})
		if err != nil || n != 1 {
			t.Errorf("acme resend = %d, %v", n, err)
		}
	})
}
