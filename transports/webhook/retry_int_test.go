package webhook

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

func always(status int, body string) func(int, request) (int, http.Header, string) {
	return func(int, request) (int, http.Header, string) { return status, nil, body }
}

func TestH3_RetriesThenDeadThenResend(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, func(c *Config) { c.BreakerThreshold = 100 })
		tb.recv.setRespond(always(500, strings.Repeat("x", 5000)))
		ep := tb.endpoint(t, "/hook")
		start := time.Now()
		ev := newEvent(t, "user.created")
		tb.send(t, ev)
		// Schedule of 2 retries: 3 attempts, then dead.
		d := tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 1, DeliveryDead)[0]
		if got := tb.recv.count(""); got != 3 {
			t.Fatalf("receiver got %d attempts, want 3 (1 + 2 retries)", got)
		}
		if d.Attempt != 3 || len(d.Errors) != 3 || d.Reason != "exhausted" || d.LastStatus != 500 {
			t.Fatalf("dead delivery = attempt %d, %d errors, reason %q, status %d; want 3, 3, exhausted, 500",
				d.Attempt, len(d.Errors), d.Reason, d.LastStatus)
		}
		if len(d.LastResponse) != DefaultResponseExcerpt || !strings.Contains(d.LastError, "status 500") || d.LastCode != "Internal" {
			t.Fatalf("dead delivery keeps %d response bytes, error %q, code %q; want %d, status 500, Internal",
				len(d.LastResponse), d.LastError, d.LastCode, DefaultResponseExcerpt)
		}
		if ev2, err := d.Event(); err != nil || ev2.ID != ev.ID {
			t.Fatalf("Delivery.Event = %v, %v", ev2, err)
		}

		// Resend one: the receiver is back.
		tb.recv.setRespond(always(200, "ok"))
		if _, err := tb.tr.Resend(tb.ctx, d.ID); err != nil {
			t.Fatal(err)
		}
		tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 1, DeliveryDelivered)

		// Bulk: three more die, only those in the time range are resent.
		tb.recv.setRespond(always(503, "down"))
		mid := time.Now()
		tb.send(t, newEvent(t, "user.created"), newEvent(t, "user.created"))
		tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID, Since: mid}, 2, DeliveryDead)
		if n, err := tb.tr.ResendDead(tb.ctx, ResendFilter{EndpointID: ep.ID, Since: start, Until: mid}); err != nil || n != 0 {
			t.Fatalf("ResendDead before mid = %d, %v; want 0 (none dead there)", n, err)
		}
		tb.recv.setRespond(always(204, ""))
		if n, err := tb.tr.ResendDead(tb.ctx, ResendFilter{EndpointID: ep.ID, Since: mid}); err != nil || n != 2 {
			t.Fatalf("ResendDead = %d, %v; want 2", n, err)
		}
		tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 3, DeliveryDelivered)
	})
}

func TestH3_RetryAfter(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		tb.recv.setRespond(func(n int, _ request) (int, http.Header, string) {
			if n == 1 {
				return 429, http.Header{"Retry-After": {"1"}}, "slow down"
			}
			return 200, nil, ""
		})
		tb.endpoint(t, "/hook")
		tb.send(t, newEvent(t, "user.created"))
		tb.waitStates(t, DeliveryFilter{}, 1, DeliveryDelivered)
		rs := tb.recv.requests()
		if len(rs) != 2 {
			t.Fatalf("%d requests, want 2", len(rs))
		}
		// The schedule says 10 ms; the receiver asked for 1 s.
		if gap := rs[1].at.Sub(rs[0].at); gap < time.Second {
			t.Fatalf("retry came %s after the 429, want at least the Retry-After of 1s", gap)
		}
	})
}

func TestH3_GoneDisablesEndpoint(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		tb.recv.setRespond(always(410, "gone"))
		ep := tb.endpoint(t, "/hook")
		tb.send(t, newEvent(t, "user.created"))
		d := tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 1, DeliveryDead)[0]
		if d.Reason != "gone" || d.LastStatus != 410 || d.Attempt != 1 {
			t.Fatalf("delivery after 410: reason %q status %d attempt %d; want gone, 410, 1", d.Reason, d.LastStatus, d.Attempt)
		}
		got, err := tb.tr.Endpoint(tb.ctx, ep.ID)
		if err != nil || got.Enabled || !strings.Contains(got.DisabledReason, "410") {
			t.Fatalf("endpoint after 410 = %+v, %v; want disabled", got, err)
		}
		tb.send(t, newEvent(t, "user.created"))
		if n := len(tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID})); n != 1 {
			t.Fatalf("%d deliveries after the endpoint was disabled, want 1", n)
		}
	})
}

func TestH4_RedirectNotFollowed(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, func(c *Config) { c.RetrySchedule = []time.Duration{10 * time.Millisecond} })
		tb.recv.setRespond(func(_ int, r request) (int, http.Header, string) {
			if r.path == "/hook" {
				return 302, http.Header{"Location": {tb.recv.url("/target")}}, ""
			}
			return 200, nil, ""
		})
		tb.endpoint(t, "/hook")
		tb.send(t, newEvent(t, "user.created"))
		d := tb.waitStates(t, DeliveryFilter{}, 1, DeliveryDead)[0]
		if d.LastStatus != 302 || tb.recv.count("/target") != 0 {
			t.Fatalf("status %d, /target hit %d times; want 302 as a failure and no redirect", d.LastStatus, tb.recv.count("/target"))
		}
	})
}

func TestH3_AttemptTimeout(t *testing.T) {
	t.Parallel()
	tb := setup(t, ledger.SQLite, func(c *Config) {
		c.AttemptTimeout = 200 * time.Millisecond
		c.RetrySchedule = []time.Duration{10 * time.Millisecond}
	})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tb.recv.setRespond(func(int, request) (int, http.Header, string) {
		<-release
		return 200, nil, ""
	})
	tb.endpoint(t, "/slow")
	tb.send(t, newEvent(t, "user.created"))
	d := tb.waitStates(t, DeliveryFilter{}, 1, DeliveryDead)[0]
	if d.LastCode != "DeadlineExceeded" || d.LastStatus != 0 {
		t.Fatalf("timed-out delivery: code %q status %d, want DeadlineExceeded and no status", d.LastCode, d.LastStatus)
	}
}
