package webhook

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// Issue 18: the first attempt made in process (inline.go, ledger/claimed.go).

// jobRow reads what River's table holds of a delivery.
type jobRow struct {
	claimed    bool // attempted when created: inserted running (River's fetch comes later)
	state      string
	attempt    int
	attemptBy  string // last holder
	errors     int
	metaStatus string
}

func readJob(t *testing.T, tb *testBundle, id int64) jobRow {
	t.Helper()
	var r jobRow
	q := `SELECT attempted_at IS NOT DISTINCT FROM created_at, state::text, attempt,
		coalesce(attempted_by[array_upper(attempted_by, 1)], ''), coalesce(array_length(errors, 1), 0),
		coalesce(metadata->>'status', '')
		FROM ` + tb.l.Table("river_job") + ` WHERE id = $1`
	if tb.l.Backend() == ledger.SQLite {
		q = `SELECT attempted_at IS created_at, state, attempt,
			coalesce(json_extract(attempted_by, '$[#-1]'), ''), coalesce(json_array_length(errors), 0),
			coalesce(metadata ->> '$.status', '')
			FROM river_job WHERE id = ?`
	}
	err := tb.l.DB().QueryRowContext(tb.ctx, q, id).Scan(&r.claimed, &r.state, &r.attempt, &r.attemptBy, &r.errors, &r.metaStatus)
	if err != nil {
		t.Fatalf("read job %d: %v", id, err)
	}
	return r
}

// A delivery sent by a working process is delivered by that process's first attempt,
// inserted running under its worker id (no fetch by River's producer), and recorded as
// River records a worked job: completed, attempt 1, the status and the attempt list.
func TestTP_FirstAttemptInProcess(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, firstAttemptInProcess)
}

func firstAttemptInProcess(t *testing.T, b ledger.Backend) {
	// Polling once an hour: a delivery that waited for River's producer would not come.
	tb := setupWith(t, b, testConfig(), ledger.Config{FetchPollInterval: time.Hour}, true)
	ep := tb.endpoint(t, "/hook")
	tb.send(t, newEvent(t, "user.created"))
	d := tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 1, DeliveryDelivered)[0]
	if d.Attempt != 1 || len(d.Attempts) != 1 || d.Attempts[0].Status != 204 || d.LastStatus != 204 {
		t.Fatalf("delivery = attempt %d, attempts %+v, last status %d; want 1, one of 204, 204", d.Attempt, d.Attempts, d.LastStatus)
	}
	r := readJob(t, tb, d.ID)
	if !r.claimed || r.state != "completed" || r.attempt != 1 || r.attemptBy != tb.l.WorkerID() || r.errors != 0 || r.metaStatus != "204" {
		t.Fatalf("job = %+v; want claimed at insert, completed, attempt 1 by %s, no errors, status 204", r, tb.l.WorkerID())
	}
	if got := tb.recv.count("/hook"); got != 1 {
		t.Fatalf("receiver got %d requests, want 1", got)
	}
	// A claim of another worker id (this ledger fenced and rejoined since) is not attempted.
	held := func(by string) bool {
		return tb.tr.inline.holds(claimed{job: &river.Job[deliveryArgs]{JobRow: &rivertype.JobRow{AttemptedBy: []string{"x", by}}}})
	}
	if !held(tb.l.WorkerID()) || held("gone") {
		t.Fatalf("holds: own id %v, another %v; want true, false", held(tb.l.WorkerID()), held("gone"))
	}
}

// A failed first attempt is River's failed attempt: an error recorded with attempt 1,
// the job retryable at the schedule's first delay, and the retry is River's (attempt 2).
// A 410 ends the delivery and disables the endpoint, as from River's worker.
func TestTP_FirstAttemptFailureIsRiversRetry(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, firstAttemptFailureIsRiversRetry)
}

func firstAttemptFailureIsRiversRetry(t *testing.T, b ledger.Backend) {
	tb := setup(t, b, func(c *Config) {
		c.RetrySchedule = []time.Duration{time.Hour}
		c.BreakerThreshold = 100
	})
	tb.recv.setRespond(func(_ int, r request) (int, http.Header, string) {
		if r.path == "/gone" {
			return 410, nil, "gone"
		}
		return 500, nil, "down"
	})
	ep := tb.endpoint(t, "/hook")
	before := time.Now()
	tb.send(t, newEvent(t, "user.created"))
	var d *Delivery
	testenv.WaitFor(t, 30*time.Second, "first attempt recorded", func() bool {
		ds := tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID})
		if len(ds) == 1 && len(ds[0].Errors) == 1 {
			d = ds[0]
			return true
		}
		return false
	})
	if d.State != DeliveryRetrying || d.Attempt != 1 || d.Errors[0].Attempt != 1 || d.LastStatus != 500 ||
		!strings.Contains(d.LastError, "status 500") || d.LastResponse != "down" {
		t.Fatalf("delivery = %s attempt %d errors %+v status %d error %q response %q; want retrying after attempt 1 of 500",
			d.State, d.Attempt, d.Errors, d.LastStatus, d.LastError, d.LastResponse)
	}
	if r := readJob(t, tb, d.ID); !r.claimed || r.state != "retryable" {
		t.Fatalf("job = %+v; want claimed at insert, retryable", r)
	}
	if wait := d.ScheduledAt.Sub(before); wait < 59*time.Minute || wait > 61*time.Minute {
		t.Fatalf("next attempt in %s, want the schedule's 1h", wait)
	}

	gone, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/gone"), Patterns: []string{"order.#"}})
	if err != nil {
		t.Fatal(err)
	}
	tb.send(t, newEvent(t, "order.created"))
	g := tb.waitStates(t, DeliveryFilter{EndpointID: gone.ID}, 1, DeliveryDead)[0]
	if g.Reason != "gone" || g.Attempt != 1 {
		t.Fatalf("delivery to a 410 = reason %q attempt %d; want gone, 1", g.Reason, g.Attempt)
	}
	if e, err := tb.tr.Endpoint(tb.ctx, gone.ID); err != nil || e.Enabled {
		t.Fatalf("endpoint after 410 = %+v, %v; want disabled", e, err)
	}
}

// A first attempt that its gates defer (an open breaker here) gives the attempt back,
// as River's snooze does: the delivery waits, attempt 0, no error recorded, no request.
func TestTP_FirstAttemptDeferredSpendsNothing(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, firstAttemptDeferredSpendsNothing)
}

func firstAttemptDeferredSpendsNothing(t *testing.T, b ledger.Backend) {
	tb := setup(t, b, func(c *Config) { c.BreakerThreshold = 1 })
	tb.recv.setRespond(always(500, "down"))
	ep := tb.endpoint(t, "/hook")
	tb.send(t, newEvent(t, "user.created"))
	tb.waitBreaker(t, ep.ID, BreakerOpen)
	n := tb.recv.count("/hook")
	tb.send(t, newEvent(t, "user.updated"))
	var d *Delivery
	testenv.WaitFor(t, 30*time.Second, "second delivery deferred", func() bool {
		for _, x := range tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID}) {
			if x.EventType == "user.updated" && readJob(t, tb, x.ID).state != "running" {
				d = x
				return true
			}
		}
		return false
	})
	r := readJob(t, tb, d.ID)
	if r.attempt != 0 || r.errors != 0 || (r.state != "scheduled" && r.state != "available") {
		t.Fatalf("deferred job = %+v; want scheduled, attempt 0, no error", r)
	}
	if got := tb.recv.count("/hook"); got != n {
		t.Fatalf("receiver got %d more requests while the breaker was open", got-n)
	}
}

// The ledger's Stop gives the deliveries still waiting for a slot back to River's queue
// unspent (before River's own workers stop) and lets the attempts running finish and be
// recorded; a transaction the
// ledger did not begin keeps River's path.
func TestTP_FirstAttemptStopAndForeignTx(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, firstAttemptStopAndForeignTx)
}

func firstAttemptStopAndForeignTx(t *testing.T, b ledger.Backend) {
	cfg := testConfig()
	cfg.Workers = 1
	tb := setupWith(t, b, cfg, ledger.Config{}, true)
	free := holdFirstRequest(t, tb)
	ep := tb.endpoint(t, "/hook")
	tb.send(t, newEvent(t, "user.created"), newEvent(t, "user.created"), newEvent(t, "user.created"))
	testenv.WaitFor(t, 30*time.Second, "first request in flight", func() bool { return tb.recv.count("/hook") == 1 })
	// The ledger's Stop drains the first attempts before it gives the worker id up: the
	// one in flight finishes and is recorded, the two waiting go back to the queue.
	go func() {
		time.Sleep(200 * time.Millisecond)
		free()
	}()
	if err := tb.l.Stop(tb.ctx); err != nil {
		t.Fatal(err)
	}
	ds := tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID})
	states := map[string]int{}
	for _, d := range ds {
		r := readJob(t, tb, d.ID)
		key := r.state
		if r.state == "completed" && !r.claimed {
			key = "completed by River's worker"
		}
		if r.state == "available" && r.attempt == 0 {
			key = "given back"
		}
		states[key]++
		if key == "available" {
			t.Logf("delivery %d: attempt %d errors %+v", d.ID, d.Attempt, d.Errors)
		}
	}
	// Given back, they are River's again: its workers, stopping gracefully after the
	// drain, may still have taken them (each attempted once), or they wait, unspent.
	river := states["completed by River's worker"]
	if states["completed"] != 1 || river+states["given back"] != 2 {
		t.Fatalf("after Stop: %v; want 1 completed in process, 2 given back (available, attempt 0, or then delivered by River's worker)", states)
	}
	if got := tb.recv.count("/hook"); got != 1+river {
		t.Fatalf("receiver got %d requests, want %d (one per delivery attempted)", got, 1+river)
	}

	// A caller's own transaction: no commit callback, so River's path.
	tb2 := setup(t, b, nil)
	tb2.endpoint(t, "/hook")
	state, attempt := sendForeignTx(t, tb2)
	if state != "available" || attempt != 0 {
		t.Fatalf("delivery of a foreign transaction = %s attempt %d; want available, 0 (River's producer works it)", state, attempt)
	}
	tb2.waitStates(t, DeliveryFilter{}, 1, DeliveryDelivered)
}

// sendForeignTx sends one event in a transaction the ledger did not begin (InTx's are
// the ones it sees commit) and returns its delivery's state and attempt as read in it.
func sendForeignTx(t *testing.T, tb *testBundle) (state string, attempt int) {
	t.Helper()
	const q = `SELECT state, attempt FROM river_job WHERE kind = 'webhook_delivery'`
	if tb.l.Backend() == ledger.SQLite {
		tx, err := tb.l.DB().BeginTx(tb.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		if err := tb.tr.SendTx(tb.ctx, tx, newEventBatch(t, 1)); err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRowContext(tb.ctx, q).Scan(&state, &attempt); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		return state, attempt
	}
	tx, err := tb.l.Pool().Begin(tb.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.tr.SendTx(tb.ctx, tx, newEventBatch(t, 1)); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(tb.ctx, `SELECT state::text, attempt FROM `+tb.l.Table("river_job")+` WHERE kind = 'webhook_delivery'`).Scan(&state, &attempt); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(context.WithoutCancel(tb.ctx)); err != nil {
		t.Fatal(err)
	}
	return state, attempt
}

func newEventBatch(t *testing.T, n int) []*cloudevent.Event {
	out := make([]*cloudevent.Event, n)
	for i := range out {
		out[i] = newEvent(t, "user.created")
	}
	return out
}

// A transaction that claimed its deliveries before the ledger's Stop began and commits
// after Stop drained the first attempts: the deliveries go back to River unattempted
// (Stop is about to give the worker id up, so an attempt now could run beside the one
// of the process that takes them over). A Start after the Stop claims and attempts
// again, under a new worker id.
func TestTP_FirstAttemptClaimedAcrossStop(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, firstAttemptClaimedAcrossStop)
}

func firstAttemptClaimedAcrossStop(t *testing.T, b ledger.Backend) {
	tb := setupWith(t, b, testConfig(), ledger.Config{}, true)
	ep := tb.endpoint(t, "/hook")
	in := tb.tr.inline
	var stopped chan error
	err := tb.l.InTx(tb.ctx, func(tx any) error {
		if err := tb.tr.SendTx(tb.ctx, tx, newEventBatch(t, 2)); err != nil {
			return err
		}
		id := tb.l.WorkerID()
		stopped = make(chan error, 1)
		go func() { stopped <- tb.l.Stop(tb.ctx) }()
		testenv.WaitFor(t, 30*time.Second, "Stop's drain of the first attempts", func() bool {
			in.mu.Lock()
			defer in.mu.Unlock()
			return in.drained[id]
		})
		return nil // commits: AfterCommit dispatches the two claimed deliveries
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	ds := tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID})
	if len(ds) != 2 {
		t.Fatalf("%d deliveries, want 2", len(ds))
	}
	// Given back, they are River's: its producer, which runs until after the drain, may
	// still fetch them and its worker attempt them once (as in
	// TestTP_FirstAttemptStopAndForeignTx); none is attempted in process.
	river := 0
	testenv.WaitFor(t, 30*time.Second, "the claimed deliveries given back", func() bool {
		river = 0
		for _, d := range ds {
			r := readJob(t, tb, d.ID)
			switch {
			case r.state == "available" && r.attempt == 0:
			case r.state == "completed" && !r.claimed && r.attempt == 1:
				river++
			default:
				return false
			}
		}
		return true
	})
	if n := tb.recv.count("/hook"); n != river {
		t.Fatalf("receiver got %d requests while the ledger stopped, want %d (one per delivery River's worker took back)", n, river)
	}

	// Working again: River's workers take the two given back; a new Send is claimed
	// under the new worker id and attempted in process.
	if err := tb.l.Start(tb.ctx); err != nil {
		t.Fatal(err)
	}
	tb.send(t, newEvent(t, "user.created"))
	tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 3, DeliveryDelivered)
	claimed := 0
	for _, d := range tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID}) {
		if readJob(t, tb, d.ID).claimed {
			claimed++
		}
	}
	if claimed != 1 {
		t.Fatalf("%d deliveries attempted in process after the restart, want 1 (the new one)", claimed)
	}
}

// When the ledger loses the presence of the worker id a first attempt runs under
// (fenced), the attempt is cancelled as River's own running jobs are: the request in
// flight is abandoned, so it cannot run on beside the attempt of the process that
// takes the delivery over after the presence grace. The ledger calls the inliner's
// fenced (OnFence; the call itself is TestO2_PresenceFencesBeforeTakeover's).
func TestTP_FirstAttemptCancelledWhenFenced(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, firstAttemptCancelledWhenFenced)
}

func firstAttemptCancelledWhenFenced(t *testing.T, b ledger.Backend) {
	tb := setupWith(t, b, testConfig(), ledger.Config{FetchPollInterval: time.Hour}, true)
	arrived, abandoned := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // read whole, the server notices the client leave
		once.Do(func() { close(arrived) })
		select {
		case <-r.Context().Done():
			close(abandoned)
		case <-time.After(time.Minute):
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: srv.URL + "/slow", Patterns: []string{"#"}})
	if err != nil {
		t.Fatal(err)
	}
	tb.send(t, newEvent(t, "user.created"))
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the first attempt did not arrive")
	}
	tb.tr.inline.fenced(tb.l.WorkerID())
	select {
	case <-abandoned:
	case <-time.After(10 * time.Second):
		t.Fatal("the attempt in flight went on after its worker id was fenced")
	}
	// Nobody took it over here (the ledger was not really fenced): the cancelled
	// attempt is recorded as a failed attempt 1, for River to retry.
	var id int64
	testenv.WaitFor(t, 30*time.Second, "the cancelled attempt recorded", func() bool {
		ds := tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID})
		if len(ds) != 1 {
			return false
		}
		id = ds[0].ID
		return readJob(t, tb, id).state != "running"
	})
	// Read the delivery again: the listing above can predate the outcome its job read saw.
	d := tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID})[0]
	if r := readJob(t, tb, d.ID); !r.claimed || r.attempt != 1 || r.errors != 1 || d.LastCode != "Canceled" {
		t.Fatalf("job = %+v, last code %q; want the claimed attempt 1 recorded with its error, Canceled", r, d.LastCode)
	}
	// An attempt that passed its holds check just before the fence starts cancelled.
	ctx, done := tb.tr.inline.hold(tb.l.WorkerID())
	defer done()
	if ctx.Err() == nil {
		t.Fatal("an attempt under the fenced worker id started with a live context")
	}
}

// A burst that fills the first attempts' backlog (Config.FirstAttemptBacklogBytes) is
// not held in memory past the bound: deliveries sent while it is full are queued for
// River's workers instead of claimed, and are delivered by them meanwhile; once the
// backlog drains, new deliveries are claimed again. Nothing is lost or sent twice.
func TestTP_FirstAttemptBacklogBound(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, firstAttemptBacklogBound)
}

func firstAttemptBacklogBound(t *testing.T, b ledger.Backend) {
	cfg := testConfig()
	cfg.Workers = 1
	cfg.FirstAttemptBacklogBytes = 1      // one waiting delivery fills it
	cfg.AttemptTimeout = 20 * time.Second // the held first request must not time out (a retry would be a fifth request)
	var logs testenv.LogBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	tb := setupWith(t, b, cfg, ledger.Config{}, true)
	free := holdFirstRequest(t, tb) // the one first-attempt slot stays busy
	ep := tb.endpoint(t, "/hook")
	first, waiting, over := newEvent(t, "user.created"), newEvent(t, "user.created"), newEvent(t, "user.created")
	tb.send(t, first)
	testenv.WaitFor(t, 30*time.Second, "first request in flight", func() bool { return tb.recv.count("/hook") == 1 })
	tb.send(t, waiting) // claimed: waits in the backlog, which is then full
	tb.send(t, over)    // not claimed: River's worker delivers it while the slot is busy
	testenv.WaitFor(t, 30*time.Second, "the delivery sent over the bound, by River's worker", func() bool { return tb.recv.count("/hook") == 2 })
	if got := logs.String(); !strings.Contains(got, "backlog full") {
		t.Fatalf("no warning that the backlog is full; logs:\n%s", got)
	}
	const backlogGauge = "webhook_first_attempt_backlog_bytes"
	if v := gauge(t, tb.reg, backlogGauge, nil); v <= 0 {
		t.Fatalf("%s = %v while a delivery waits for the slot; want its size", backlogGauge, v)
	}
	free()
	testenv.WaitFor(t, 30*time.Second, "all three delivered", func() bool { return tb.recv.count("/hook") == 3 })
	after := newEvent(t, "user.created") // the backlog drained: claimed again
	tb.send(t, after)
	tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 4, DeliveryDelivered)
	if got := tb.recv.count("/hook"); got != 4 {
		t.Fatalf("receiver got %d requests, want 4 (one per delivery)", got)
	}
	claimed := map[string]bool{}
	for _, d := range tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID}) {
		claimed[d.EventID] = readJob(t, tb, d.ID).claimed
	}
	// waiting is not checked: claimed, it waits for the slot at most 5 s (then River
	// gets it, attempt unspent), a margin a loaded machine could use up.
	want := map[string]bool{first.ID: true, over.ID: false, after.ID: true}
	for id, w := range want {
		if claimed[id] != w {
			t.Errorf("event %s: claimed %v, want %v (all: %v)", id, claimed[id], w, claimed)
		}
	}
	if got := logs.String(); !strings.Contains(got, "backlog drained") {
		t.Fatalf("no log that the backlog drained; logs:\n%s", got)
	}
	if v := gauge(t, tb.reg, backlogGauge, nil); v != 0 {
		t.Fatalf("%s = %v once drained; want 0", backlogGauge, v)
	}
}

// holdFirstRequest makes tb's receiver hold its first request until the returned func
// is called (idempotent; also at cleanup, before the receiver's and the ledger's own,
// so a failing test does not hang on it) and answer every request 204.
func holdFirstRequest(t *testing.T, tb *testBundle) (free func()) {
	release := make(chan struct{})
	var once sync.Once
	free = func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	tb.recv.setRespond(func(n int, _ request) (int, http.Header, string) {
		if n == 1 {
			<-release
		}
		return 204, nil, ""
	})
	return free
}
