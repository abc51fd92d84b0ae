package webhook

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// TestUI_DeliveryPage pages deliveries newest first by keyset, with state, type
// pattern, exact type and tenant filters in one query each, and resends every match.
func TestUI_DeliveryPage(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		ep := tb.endpoint(t, "/hook")
		other, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/b"), Patterns: []string{"#"}, TenantID: "t2"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 7 {
			typ := "user.created"
			if i%2 == 1 {
				typ = "order.paid"
			}
			tb.send(t, newEvent(t, typ))
		}
		tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 7, DeliveryDelivered)

		var seen []int64
		q := DeliveryQuery{DeliveryFilter: DeliveryFilter{EndpointID: ep.ID}, Limit: 3}
		for pages := 0; ; pages++ {
			p, err := tb.tr.DeliveryPage(tb.ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range p.Deliveries {
				seen = append(seen, d.ID)
			}
			if p.Next == 0 {
				if pages != 2 {
					t.Fatalf("pages = %d, want 3 of 3, 3, 1", pages+1)
				}
				break
			}
			q.Before = p.Next
		}
		if len(seen) != 7 {
			t.Fatalf("paged %d deliveries, want 7", len(seen))
		}
		for i := 1; i < len(seen); i++ {
			if seen[i] >= seen[i-1] {
				t.Fatalf("ids not newest first: %v", seen)
			}
		}
		for typ, want := range map[string]int{"order.paid": 3, "user.*": 4, "#": 7, "billing.#": 0} {
			p, err := tb.tr.DeliveryPage(tb.ctx, DeliveryQuery{DeliveryFilter: DeliveryFilter{EndpointID: ep.ID}, Type: typ})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Deliveries) != want {
				t.Errorf("type %q: %d deliveries, want %d", typ, len(p.Deliveries), want)
			}
		}
		// Tenant t2's endpoint received nothing of tenant t1 (its events are t1's).
		if p, _ := tb.tr.DeliveryPage(tb.ctx, DeliveryQuery{DeliveryFilter: DeliveryFilter{TenantID: "t2"}}); len(p.Deliveries) != 0 {
			t.Fatalf("tenant t2 sees %d deliveries, want 0", len(p.Deliveries))
		}
		if p, _ := tb.tr.DeliveryPage(tb.ctx, DeliveryQuery{DeliveryFilter: DeliveryFilter{EndpointID: other.ID}}); len(p.Deliveries) != 0 {
			t.Fatalf("endpoint of t2 has %d deliveries, want 0", len(p.Deliveries))
		}
		if _, err := tb.tr.DeliveryPage(tb.ctx, DeliveryQuery{Type: "a..b"}); err == nil {
			t.Fatal("a bad type pattern was accepted")
		}

		n, err := tb.tr.ResendMatching(tb.ctx, DeliveryQuery{DeliveryFilter: DeliveryFilter{EndpointID: ep.ID}, Type: "order.paid"})
		if err != nil || n != 3 {
			t.Fatalf("ResendMatching = %d, %v; want 3", n, err)
		}
		testenv.WaitFor(t, 30*time.Second, "10 requests", func() bool { return tb.recv.count("/hook") == 10 })
	})
}

// TestUI_AttemptsAndHistory records every attempt's status, latency and response
// excerpt, and every breaker transition; SendTest delivers a test event to one endpoint.
func TestUI_AttemptsAndHistory(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, func(c *Config) {
			c.BreakerThreshold = 2
			c.BreakerPause = 200 * time.Millisecond
			c.RetrySchedule = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}
		})
		tb.recv.setRespond(func(n int, _ request) (int, http.Header, string) {
			if n <= 2 {
				return 503, nil, "down for maintenance " + strings.Repeat("x", 400)
			}
			return 200, nil, "ok thanks"
		})
		ep := tb.endpoint(t, "/hook")
		d, err := tb.tr.SendTest(tb.ctx, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.EventType != TestEventType || d.EndpointID != ep.ID {
			t.Fatalf("test delivery = %+v", d)
		}
		tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 1, DeliveryDelivered)
		got, err := tb.tr.Delivery(tb.ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Attempts) != 3 {
			t.Fatalf("attempts = %+v, want 3", got.Attempts)
		}
		first, last := got.Attempts[0], got.Attempts[2]
		if first.Status != 503 || first.Error == "" || !strings.HasPrefix(first.Response, "down for maintenance") ||
			len(first.Response) != attemptExcerpt || first.Attempt != 1 {
			t.Errorf("first attempt = %+v", first)
		}
		if last.Status != 200 || last.Error != "" || last.Response != "ok thanks" || !last.Delivered() || last.LatencyMS <= 0 {
			t.Errorf("last attempt = %+v", last)
		}
		h, err := tb.tr.BreakerHistory(tb.ctx, ep.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		var states []string
		for _, tr := range h {
			states = append([]string{string(tr.State)}, states...)
		}
		if strings.Join(states, ",") != "open,half_open,closed" {
			t.Fatalf("breaker history (oldest first) = %v, want open,half_open,closed", states)
		}
		if h[len(h)-1].Failures != 2 {
			t.Errorf("opened with %d failures recorded, want 2", h[len(h)-1].Failures)
		}
		if err := tb.tr.DeleteEndpoint(tb.ctx, ep.ID); err != nil {
			t.Fatal(err)
		}
		if h, _ := tb.tr.BreakerHistory(tb.ctx, ep.ID, 0); len(h) != 0 {
			t.Fatalf("history outlived its endpoint: %v", h)
		}
	})
}

// TestUI_DeliveryCounts counts deliveries by state for the overview.
func TestUI_DeliveryCounts(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		ep := tb.endpoint(t, "/hook")
		tb.send(t, newEvent(t, "user.created"), newEvent(t, "user.created"))
		tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 2, DeliveryDelivered)
		n, err := tb.tr.DeliveryCounts(tb.ctx)
		if err != nil || n[DeliveryDelivered] != 2 || len(n) != 1 {
			t.Fatalf("DeliveryCounts = %v, %v; want 2 delivered", n, err)
		}
	})
}
