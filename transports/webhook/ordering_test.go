package webhook

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
)

// orderedRun is the bookkeeping of an ordering test: which key and sequence number
// each event id is.
type orderedRun struct {
	keyOf map[string]string
	seqOf map[string]int
	order map[string][]string // key -> event ids in fan-out order
}

// check verifies, from the receiver's log, that no request of a key ever went back to
// an earlier event once a later one had been sent, and that each event's last request
// succeeded before the next event's first.
func (run *orderedRun) check(t *testing.T, reqs []request, ok func(request) bool) {
	t.Helper()
	last := map[string]int{} // key -> highest seq requested so far
	done := map[string]int{} // key -> seqs delivered
	for _, r := range reqs {
		id := r.header.Get(IDHeader)
		key, seq := run.keyOf[id], run.seqOf[id]
		if prev, seen := last[key]; seen && seq < prev {
			t.Fatalf("key %s: event %d requested after event %d", key, seq, prev)
		}
		if seq > done[key] {
			t.Fatalf("key %s: event %d requested before event %d was delivered", key, seq, done[key])
		}
		last[key] = seq
		if ok(r) {
			done[key] = seq + 1
		}
	}
}

// TestDC_OrderedDelivery: a receiver failing at random, 3 workers in each of two
// processes on one ledger, one process stopped mid-run: per key, deliveries never
// overtake; a key whose head is dead and held waits alone while the other keys go on,
// and moves again once the dead delivery is resent.
func TestDC_OrderedDelivery(t *testing.T) {
	t.Parallel()
	const keys, perKey = 4, 8
	cfg := testConfig()
	cfg.Workers = 3
	cfg.RetrySchedule = []time.Duration{5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond,
		5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond}
	cfg.BreakerThreshold = 1000 // random failures must not open the breaker
	tb := setupWith(t, ledger.Postgres, cfg, ledger.Config{}, true)
	replica := tb.replica(t, cfg)

	var (
		mu       sync.Mutex
		rng      = rand.New(rand.NewPCG(17, 1))
		released atomic.Bool
		headID   atomic.Value // k0's first event: fails until released
	)
	headID.Store("")
	status := map[string][]int{}
	tb.recv.setRespond(func(_ int, r request) (int, http.Header, string) {
		id := r.header.Get(IDHeader)
		mu.Lock()
		defer mu.Unlock()
		code := 200
		switch {
		case id == headID.Load().(string):
			if !released.Load() {
				code = 503
			}
		case rng.IntN(10) < 3:
			code = 500
		}
		status[id] = append(status[id], code)
		return code, nil, ""
	})
	ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/ordered"), Patterns: []string{"#"},
		Controls: Controls{Ordering: Ordering{Enabled: true, OnDead: OnDeadHold}}})
	if err != nil {
		t.Fatal(err)
	}
	run := tb.sendOrderedWithHead(t, keys, perKey, &headID)

	// Half-way, stop the first process: the replica carries on with the rest.
	tb.waitDelivered(t, ep.ID, (keys-1)*perKey/2)
	stopLedger(t, tb.l)

	// Every other key completes although k0 is held behind its dead head.
	testenv.WaitFor(t, 60*time.Second, "other keys delivered", func() bool {
		return countDelivered(t, replica, ep.ID) == (keys-1)*perKey
	})
	head := headID.Load().(string)
	ds, err := replica.Deliveries(tb.ctx, DeliveryFilter{EndpointID: ep.ID, EventID: head})
	if err != nil || len(ds) != 1 {
		t.Fatalf("head delivery: %v, %d", err, len(ds))
	}
	testenv.WaitFor(t, 30*time.Second, "head dead", func() bool {
		d, err := replica.Delivery(tb.ctx, ds[0].ID)
		return err == nil && d.State == DeliveryDead
	})
	for _, r := range tb.recv.requests() {
		if run.keyOf[r.header.Get(IDHeader)] == "k0" && r.header.Get(IDHeader) != head {
			t.Fatalf("k0 event %d sent while its head is dead and held", run.seqOf[r.header.Get(IDHeader)])
		}
	}
	// The operator resends the head: k0 moves again, in order.
	t.Logf("phase: resend head at %s", time.Now().Format(time.StampMilli))
	released.Store(true)
	if _, err := replica.Resend(tb.ctx, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			all, err := replica.Deliveries(context.Background(), DeliveryFilter{EndpointID: ep.ID})
			t.Logf("dump: %d deliveries, %v", len(all), err)
			for _, d := range all {
				if d.State != DeliveryDelivered {
					t.Logf("delivery %d %s seq %d: %s attempt %d scheduled %s", d.ID, run.keyOf[d.EventID], run.seqOf[d.EventID], d.State, d.Attempt, d.ScheduledAt.Format(time.StampMilli))
				}
			}
		}
	})
	testenv.WaitFor(t, 30*time.Second, "all delivered", func() bool {
		return countDelivered(t, replica, ep.ID) == keys*perKey
	})
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]int{}
	run.check(t, tb.recv.requests(), func(r request) bool {
		id := r.header.Get(IDHeader)
		n := seen[id]
		seen[id]++
		return status[id][n] == 200
	})
}

// sendOrderedWithHead is sendOrdered recording k0's first event id in head before
// anything is sent, so the receiver can fail it from its first request.
func (tb *testBundle) sendOrderedWithHead(t *testing.T, keys, perKey int, head *atomic.Value) *orderedRun {
	t.Helper()
	run := &orderedRun{keyOf: map[string]string{}, seqOf: map[string]int{}, order: map[string][]string{}}
	var evs []*cloudevent.Event
	for n := range perKey {
		for k := range keys {
			key := fmt.Sprintf("k%d", k)
			ev := cloudevent.New("/test", "order.step").SetTenantID("t1").SetSubject(key)
			_ = ev.SetData("application/json", map[string]int{"seq": n})
			run.keyOf[ev.ID], run.seqOf[ev.ID] = key, n
			run.order[key] = append(run.order[key], ev.ID)
			evs = append(evs, ev)
		}
	}
	head.Store(evs[0].ID)
	for _, ev := range evs {
		tb.send(t, ev) // one Send each: each fan-out commits before the next begins
	}
	return run
}

func countDelivered(t *testing.T, tr *Transport, epID string) int {
	t.Helper()
	ds, err := tr.Deliveries(t.Context(), DeliveryFilter{EndpointID: epID, State: DeliveryDelivered})
	if err != nil {
		t.Fatalf("Deliveries: %v", err)
	}
	return len(ds)
}

func (tb *testBundle) waitDelivered(t *testing.T, epID string, n int) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, fmt.Sprintf("%d delivered", n), func() bool { return countDelivered(t, tb.tr, epID) >= n })
}

func stopLedger(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// TestDC_OrderedSkip: with on_dead skip, a dead head lets the rest of its key go.
func TestDC_OrderedSkip(t *testing.T) {
	t.Parallel()
	tb := setup(t, ledger.SQLite, nil)
	var head atomic.Value
	head.Store("")
	tb.recv.setRespond(func(_ int, r request) (int, http.Header, string) {
		if r.header.Get(IDHeader) == head.Load().(string) {
			return 500, nil, ""
		}
		return 204, nil, ""
	})
	ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/skip"), Patterns: []string{"#"},
		Controls: Controls{Ordering: Ordering{Enabled: true, Key: "actor", OnDead: OnDeadSkip}}})
	if err != nil {
		t.Fatal(err)
	}
	var evs []*cloudevent.Event
	for range 5 {
		evs = append(evs, newEvent(t, "user.created").SetActor("user:1"))
	}
	head.Store(evs[0].ID)
	for _, ev := range evs {
		tb.send(t, ev)
	}
	testenv.WaitFor(t, 30*time.Second, "rest delivered", func() bool { return countDelivered(t, tb.tr, ep.ID) == 4 })
	reqs := tb.recv.requests()
	for i, r := range reqs {
		if r.header.Get(IDHeader) != head.Load().(string) {
			for _, later := range reqs[i:] {
				if later.header.Get(IDHeader) == head.Load().(string) {
					t.Fatal("the head was attempted after its followers: they overtook it")
				}
			}
			break
		}
	}
	if _, err := (&Controls{Ordering: Ordering{OnDead: "drop", Enabled: true}}).compile(); hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("bad on_dead: %v", err)
	}
}
