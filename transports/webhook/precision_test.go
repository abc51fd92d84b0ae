package webhook

import (
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// leaveMillisecond returns once the clock has left t's millisecond, so that whatever
// is stamped next lies in a later one (ledger.TimePrecision).
func leaveMillisecond(t time.Time) {
	for !ledger.Truncate(time.Now()).After(ledger.Truncate(t)) {
		time.Sleep(100 * time.Microsecond)
	}
}

// TestH3_SinceUntilMillisecondBoundary pins the time range of Deliveries and ResendDead
// at the ledger's millisecond on both stores: a delivery created in Since's millisecond
// is included even when Since is later within it, one created in Until's millisecond is
// excluded even when Until is later within it, and a bound taken just before a Send
// always selects that Send's delivery (the same-millisecond case that made SQLite and
// PostgreSQL disagree).
func TestH3_SinceUntilMillisecondBoundary(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, func(c *Config) {
			c.RetrySchedule = []time.Duration{time.Hour} // each stays retrying after its first failure
			c.BreakerThreshold = 1000
		})
		tb.recv.setRespond(always(500, "down"))
		ep := tb.endpoint(t, "/hook")

		// A bound taken right before each Send: the delivery must be in [since, ...).
		// Each round starts at a fresh millisecond so that most land in the bound's own.
		const rounds = 20
		same := 0
		for range rounds {
			leaveMillisecond(time.Now())
			since := time.Now()
			ev := newEvent(t, "user.created")
			tb.send(t, ev)
			ds := tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID, EventID: ev.ID, Since: since})
			if len(ds) != 1 {
				all := tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID, EventID: ev.ID})
				t.Fatalf("Since %s (taken before the Send) selects %d deliveries, want 1 (created at %v)",
					since.Format(time.RFC3339Nano), len(ds), createdTimes(all))
			}
			if got := tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID, EventID: ev.ID, Until: since}); len(got) != 0 {
				t.Fatalf("Until %s (taken before the Send) selects the Send's delivery", since.Format(time.RFC3339Nano))
			}
			if ledger.Truncate(ds[0].CreatedAt).Equal(ledger.Truncate(since)) {
				same++
			}
		}
		t.Logf("%d of %d deliveries were created in their bound's millisecond", same, rounds)

		// Bounds inside one delivery's millisecond, set on purpose.
		d := tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID})[0]
		if !d.CreatedAt.Equal(ledger.Truncate(d.CreatedAt)) {
			t.Fatalf("CreatedAt %s is finer than the ledger's precision %s", d.CreatedAt.Format(time.RFC3339Nano), ledger.TimePrecision)
		}
		inside := d.CreatedAt.Add(999 * time.Microsecond) // same millisecond, later
		for _, c := range []struct {
			name string
			f    DeliveryFilter
			want bool
		}{
			{"SinceLaterInItsMillisecond", DeliveryFilter{Since: inside}, true},
			{"SinceAtIt", DeliveryFilter{Since: d.CreatedAt}, true},
			{"SinceNextMillisecond", DeliveryFilter{Since: d.CreatedAt.Add(time.Millisecond)}, false},
			{"UntilLaterInItsMillisecond", DeliveryFilter{Until: inside}, false},
			{"UntilNextMillisecond", DeliveryFilter{Until: d.CreatedAt.Add(time.Millisecond)}, true},
			{"RangeOfItsMillisecond", DeliveryFilter{Since: inside, Until: inside.Add(time.Microsecond)}, true},
		} {
			c.f.EndpointID, c.f.EventID = ep.ID, d.EventID
			if got := len(tb.deliveries(t, c.f)) == 1; got != c.want {
				t.Errorf("%s: delivery created at %s selected = %v, want %v", c.name, d.CreatedAt.Format(time.RFC3339Nano), got, c.want)
			}
		}

		// ResendDead takes the same range.
		tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, rounds, DeliveryRetrying)
		for _, d := range tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID}) {
			if _, err := tb.l.JobCancel(tb.ctx, d.ID); err != nil {
				t.Fatal(err)
			}
		}
		tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, rounds, DeliveryDead)
		if n, err := tb.tr.ResendDead(tb.ctx, ResendFilter{EndpointID: ep.ID, Until: d.CreatedAt.Add(999 * time.Microsecond)}); err != nil || n != 0 {
			t.Fatalf("ResendDead until the first delivery's millisecond = %d, %v; want 0", n, err)
		}
		tb.recv.setRespond(always(204, ""))
		if n, err := tb.tr.ResendDead(tb.ctx, ResendFilter{EndpointID: ep.ID, Since: inside, Until: inside}); err != nil || n != 0 {
			t.Fatalf("ResendDead of an empty range = %d, %v; want 0", n, err)
		}
		if n, err := tb.tr.ResendDead(tb.ctx, ResendFilter{EndpointID: ep.ID, Since: inside, Until: d.CreatedAt.Add(time.Millisecond)}); err != nil || n != 1 {
			t.Fatalf("ResendDead of the first delivery's millisecond = %d, %v; want 1", n, err)
		}
		tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID, EventID: d.EventID}, 1, DeliveryDelivered)
	})
}

func createdTimes(ds []*Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.CreatedAt.Format(time.RFC3339Nano)
	}
	return out
}

// TestH6_SameMillisecondRegistrationReceives pins H6's boundary at the ledger's
// millisecond on both stores: an endpoint registered in the millisecond an event was
// accepted receives it, whether the acceptance time is earlier or later within that
// millisecond; one registered in a later millisecond does not. Through the outbox the
// acceptance time is the row's stored creation time (SQLite: milliseconds), which is
// how "register, then publish at once" used to miss the new endpoint.
func TestH6_SameMillisecondRegistrationReceives(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		ep := tb.endpoint(t, "/hook")
		if !ep.CreatedAt.Equal(ledger.Truncate(ep.CreatedAt)) {
			t.Fatalf("endpoint CreatedAt %s is finer than %s", ep.CreatedAt.Format(time.RFC3339Nano), ledger.TimePrecision)
		}
		stored, err := tb.tr.Endpoint(tb.ctx, ep.ID)
		if err != nil || !stored.CreatedAt.Equal(ep.CreatedAt) {
			t.Fatalf("stored CreatedAt = %v, %v; want %s", stored, err, ep.CreatedAt.Format(time.RFC3339Nano))
		}
		want := map[string]bool{}
		for _, c := range []struct {
			name     string
			accepted time.Time
			receives bool
		}{
			{"AtItsMillisecond", ep.CreatedAt, true},
			{"LaterInItsMillisecond", ep.CreatedAt.Add(999 * time.Microsecond), true},
			{"NextMillisecond", ep.CreatedAt.Add(time.Millisecond), true},
			{"PreviousMillisecond", ep.CreatedAt.Add(-time.Microsecond), false},
		} {
			ev := newEvent(t, "user.created")
			if err := tb.tr.Send(hub.WithAcceptedAt(tb.ctx, c.accepted), []*cloudevent.Event{ev}); err != nil {
				t.Fatalf("%s: Send: %v", c.name, err)
			}
			want[ev.ID] = c.receives
		}
		n := 0
		for _, r := range want {
			if r {
				n++
			}
		}
		ds := tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, n, DeliveryDelivered)
		for _, d := range ds {
			if !want[d.EventID] {
				t.Errorf("event %s accepted in the millisecond before the registration was delivered", d.EventID)
			}
		}
	})
}
