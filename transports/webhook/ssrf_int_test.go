package webhook

import (
	"net/url"
	"strings"
	"testing"

	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// TestH5_DNSRebinding: the host resolves to a public address when the endpoint is
// registered and to loopback (where the receiver listens) when the delivery dials. The
// seed's check-then-connect would have connected; the dialer checks the address it
// actually dials and refuses.
func TestH5_DNSRebinding(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		res := &rebindingResolver{first: "93.184.216.34", then: "127.0.0.1"}
		tb := setup(t, b, func(c *Config) {
			c.Allow = nil
			c.Resolver = res
		})
		u, _ := url.Parse(tb.recv.url("/hook"))
		ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: "http://rebind.test:" + u.Port() + "/hook", Patterns: []string{"#"}})
		if err != nil {
			t.Fatalf("registration (public answer) refused: %v", err)
		}
		tb.send(t, newEvent(t, "user.created"))
		d := tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 1, DeliveryDead)[0]
		if d.Reason != "blocked" || !strings.Contains(d.LastError, "127.0.0.1") || d.LastCode != "PermissionDenied" {
			t.Fatalf("delivery: reason %q code %q error %q; want blocked at dial for 127.0.0.1", d.Reason, d.LastCode, d.LastError)
		}
		if n := tb.recv.count(""); n != 0 {
			t.Fatalf("receiver on loopback got %d requests, want 0", n)
		}
		if res.calls.Load() < 2 {
			t.Fatalf("resolver asked %d times, want registration and dial", res.calls.Load())
		}
	})
}
