package webhook

import (
	"net/http"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// TestH3_Breaker walks the breaker through closed -> open -> half-open (one probe,
// which fails) -> open -> half-open (one probe, which succeeds) -> closed, and checks
// that no attempt was spent while it was open: every request the receiver saw is one
// attempt on some delivery, and the deliveries' attempt counters add up to exactly that.
func TestH3_Breaker(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, func(c *Config) {
			c.BreakerThreshold = 2
			// Long enough that a poll on a loaded machine sees each open pause.
			c.BreakerPause = 1500 * time.Millisecond
			c.RetrySchedule = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond,
				10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}
		})
		tb.recv.setRespond(always(500, "down"))
		ep := tb.endpoint(t, "/hook")
		tb.send(t, newEvent(t, "user.created"))

		open := tb.waitBreakerWhere(t, ep.ID, "a first trip", func(s BreakerStatus) bool { return s.Trips >= 1 })
		if open.Failures != 2 || open.Trips != 1 {
			t.Fatalf("opened with %d failures, %d trips; want 2, 1", open.Failures, open.Trips)
		}
		if got := tb.recv.count(""); got != 2 {
			t.Fatalf("%d attempts before opening, want 2", got)
		}
		if v := gauge(t, tb.reg, "webhook_breaker_state", map[string]string{"endpoint": ep.ID, "state": "open"}); v != 1 {
			t.Fatalf("webhook_breaker_state{state=open} = %v, want 1", v)
		}

		// Two more deliveries queue up behind the open breaker; the next request to
		// arrive is the single half-open probe, held until the test answers it.
		probes := make(chan request)
		answer := make(chan int)
		tb.recv.mu.Lock()
		tb.recv.arrived = probes
		tb.recv.mu.Unlock()
		tb.recv.setRespond(func(int, request) (int, http.Header, string) { return <-answer, nil, "" })
		tb.send(t, newEvent(t, "user.created"), newEvent(t, "user.created"))

		<-probes
		if s, _ := tb.tr.Breaker(tb.ctx, ep.ID); s.State != BreakerHalfOpen {
			t.Fatalf("during the probe the breaker is %s, want half_open", s.State)
		}
		answer <- 500 // the probe fails: open again for another pause
		// Wait on the trip count, not the open state: after the pause the next probe
		// moves the breaker to half-open (and waits below), so a poll that came late
		// would never see "open" and the held probe would time out into a third trip.
		reopened := tb.waitBreakerWhere(t, ep.ID, "a second trip", func(s BreakerStatus) bool { return s.Trips >= 2 })
		if reopened.Trips != 2 {
			t.Fatalf("trips after a failed probe = %d, want 2", reopened.Trips)
		}

		<-probes
		if s, _ := tb.tr.Breaker(tb.ctx, ep.ID); s.State != BreakerHalfOpen {
			t.Fatalf("during the second probe the breaker is %s, want half_open", s.State)
		}
		tb.recv.mu.Lock()
		tb.recv.arrived = nil
		tb.recv.mu.Unlock()
		tb.recv.setRespond(always(204, ""))
		answer <- 204 // the probe succeeds: closed, the deferred deliveries go
		tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 3, DeliveryDelivered)
		if s := tb.waitBreaker(t, ep.ID, BreakerClosed); s.Failures != 0 {
			t.Fatalf("closed breaker keeps %d failures, want 0", s.Failures)
		}

		requests := tb.recv.count("")
		attempts := 0
		for _, d := range tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID}) {
			attempts += d.Attempt
		}
		// 2 failures, 2 probes, 2 remaining deliveries.
		if requests != 6 || attempts != requests {
			t.Fatalf("receiver saw %d requests, deliveries count %d attempts; want 6 and 6 (none spent while open)", requests, attempts)
		}
		if v := gauge(t, tb.reg, "webhook_attempts_total", map[string]string{"outcome": "deferred"}); v < 1 {
			t.Fatalf("webhook_attempts_total{outcome=deferred} = %v, want deferrals counted", v)
		}
	})
}

func TestH3_BreakerReset(t *testing.T) {
	t.Parallel()
	tb := setup(t, ledger.SQLite, func(c *Config) { c.BreakerThreshold = 1 })
	tb.recv.setRespond(always(500, ""))
	ep := tb.endpoint(t, "/hook")
	tb.send(t, newEvent(t, "user.created"))
	tb.waitBreaker(t, ep.ID, BreakerOpen)
	// The retry finds the breaker open and is deferred for the pause (an hour here).
	testenv.WaitFor(t, 30*time.Second, "deferred delivery", func() bool {
		ds := tb.deliveries(t, DeliveryFilter{})
		return len(ds) == 1 && ds[0].State == DeliveryPending && ds[0].ScheduledAt.After(time.Now().Add(30*time.Minute))
	})
	tb.recv.setRespond(always(200, ""))
	if err := tb.tr.ResetBreaker(tb.ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	tb.waitStates(t, DeliveryFilter{}, 1, DeliveryDelivered)
	list, err := tb.tr.Breakers(tb.ctx)
	if err != nil || len(list) != 1 || list[0].State != BreakerClosed {
		t.Fatalf("Breakers = %+v, %v", list, err)
	}
}
