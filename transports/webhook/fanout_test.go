package webhook

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// TestDC_FanOutLimits: an endpoint at its cap of queued deliveries refuses more with
// ResourceExhausted while the other endpoints still get theirs, and a later Send of
// the same event adds only what is missing; an event matching more endpoints than the
// per-event cap is refused whole.
func TestDC_FanOutLimits(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		cfg := testConfig()
		cfg.MaxEndpointsPerEvent = 2
		tb := setupWith(t, b, cfg, ledger.Config{}, false) // not started: deliveries stay queued
		capped, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/capped"), Patterns: []string{"user.*"},
			Controls: Controls{MaxQueued: 2}})
		if err != nil {
			t.Fatal(err)
		}
		free := tb.endpoint(t, "/free", "user.*")

		var third *cloudevent.Event
		for i := range 3 {
			ev := newEvent(t, "user.created")
			err := tb.tr.Send(tb.ctx, []*cloudevent.Event{ev})
			if i < 2 && err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			if i == 2 {
				third = ev
				if hub.Code(err) != hub.ResourceExhausted || !strings.Contains(err.Error(), capped.ID) {
					t.Fatalf("third event: got %v, want ResourceExhausted naming %s", err, capped.ID)
				}
			}
		}
		if n := len(tb.deliveries(t, DeliveryFilter{EndpointID: free.ID})); n != 3 {
			t.Fatalf("uncapped endpoint has %d deliveries, want 3", n)
		}
		if n := len(tb.deliveries(t, DeliveryFilter{EndpointID: capped.ID})); n != 2 {
			t.Fatalf("capped endpoint has %d deliveries, want 2", n)
		}
		// Sending the third again (the caller's retry) still finds the cap, and adds
		// nothing twice to the uncapped endpoint.
		if err := tb.tr.Send(tb.ctx, []*cloudevent.Event{third}); hub.Code(err) != hub.ResourceExhausted {
			t.Fatalf("retry: %v", err)
		}
		if n := len(tb.deliveries(t, DeliveryFilter{EndpointID: free.ID})); n != 3 {
			t.Fatalf("uncapped endpoint has %d deliveries after the retry, want 3", n)
		}

		tb.endpoint(t, "/third", "user.*")
		err = tb.tr.Send(tb.ctx, []*cloudevent.Event{newEvent(t, "user.deleted")})
		if hub.Code(err) != hub.ResourceExhausted || !strings.Contains(err.Error(), "MaxEndpointsPerEvent") {
			t.Fatalf("three endpoints over a cap of two: got %v", err)
		}
		if n := len(tb.deliveries(t, DeliveryFilter{EndpointID: free.ID})); n != 3 {
			t.Fatalf("a refused event queued deliveries: %d", n)
		}
	})
}

// TestDC_QueuedCapUnderConcurrentSends: fan-outs racing to one capped endpoint, through
// Send and through SendTx in a caller's transaction, queue exactly the cap's number of
// deliveries and refuse the rest, each refusal ResourceExhausted (the count was read
// before the insert, outside its transaction, so each racer could see room).
func TestDC_QueuedCapUnderConcurrentSends(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		const capacity, racers = 5, 16
		tb := setupWith(t, b, testConfig(), ledger.Config{}, false) // not started: deliveries stay queued
		capped, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/capped"), Patterns: []string{"user.*"},
			Controls: Controls{MaxQueued: capacity}})
		if err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		errs := make(chan error, racers)
		for i := range racers {
			ev := newEvent(t, "user.created")
			go func() {
				<-start
				if i%2 == 0 {
					errs <- tb.tr.Send(tb.ctx, []*cloudevent.Event{ev})
					return
				}
				errs <- tb.l.InTx(tb.ctx, func(tx any) error { return tb.tr.SendTx(tb.ctx, tx, []*cloudevent.Event{ev}) })
			}()
		}
		close(start)
		var refused int
		for range racers {
			switch err := <-errs; {
			case err == nil:
			case hub.Code(err) == hub.ResourceExhausted:
				refused++
			default:
				t.Fatalf("send: %v", err)
			}
		}
		if n := len(tb.deliveries(t, DeliveryFilter{EndpointID: capped.ID})); n != capacity || refused != racers-capacity {
			t.Fatalf("%d deliveries queued and %d sends refused; want %d and %d", n, refused, capacity, racers-capacity)
		}
	})
}

// TestDC_QueuedCountUsesItsIndex: a capped endpoint's count reads the partial index of
// waiting deliveries (waitingIndexSQL), not the whole history of the table, and counts
// right, on both stores.
func TestDC_QueuedCountUsesItsIndex(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setupWith(t, b, testConfig(), ledger.Config{}, false)
		ep := tb.endpoint(t, "/capped", "user.*")
		for range 3 {
			if err := tb.tr.Send(tb.ctx, []*cloudevent.Event{newEvent(t, "user.created")}); err != nil {
				t.Fatal(err)
			}
		}
		plan, n := queuedPlan(t, tb, ep.ID)
		if !strings.Contains(plan, "webhook_delivery_waiting") {
			t.Fatalf("the queued count does not read webhook_delivery_waiting:\n%s", plan)
		}
		if n != 3 {
			t.Fatalf("queued count: %d, want 3", n)
		}
	})
}

// queuedPlan returns the plan of endpoint id's queued count and the count.
func queuedPlan(t *testing.T, tb *testBundle, id string) (string, int) {
	t.Helper()
	var n int
	if tb.l.Backend() == ledger.SQLite {
		q := `SELECT ` + tb.tr.queuedSQL("?", "10")
		plan := testenv.SQLitePlan(t, tb.l.DB(), q, id)
		if err := tb.l.DB().QueryRowContext(tb.ctx, q, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return plan, n
	}
	tx, err := tb.l.Pool().Begin(tb.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(tb.ctx) }()
	// A tiny table is read whole whatever its indexes; forbid that, as a big one would.
	if _, err := tx.Exec(tb.ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	q := `SELECT ` + tb.tr.queuedSQL("$1::text", "10")
	rows, err := tx.Query(tb.ctx, `EXPLAIN `+q, id)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(tb.ctx, q, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n"), n
}
