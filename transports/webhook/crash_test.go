package webhook

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// The crash test re-executes this test binary as the delivering process. TestMain
// sends the child here before any test runs.
const (
	envCrashChild   = "WEBHOOK_TEST_CRASH_CHILD"
	envCrashDSN     = "WEBHOOK_TEST_CRASH_DSN"
	envCrashSchema  = "WEBHOOK_TEST_CRASH_SCHEMA"
	envCrashWorkers = "WEBHOOK_TEST_CRASH_WORKERS"
	envCrashSend    = "WEBHOOK_TEST_CRASH_SEND" // events the child sends itself
)

// crashLedgerConfig is the ledger's defaults (a one-minute lease): the takeover must
// come from presence, within seconds.
func crashLedgerConfig() ledger.Config { return ledger.Config{} }

// crashDrainBound is what "within seconds" means for the takeover after a restart with
// the default ledger configuration (PostgreSQL: PresenceGrace 3 s + one presence
// period; SQLite: the first sweep at Start), far below the one-minute lease.
const crashDrainBound = 15 * time.Second

// attemptTracker records, per delivery, the requests the receiver is handling, and
// every time a second request for a delivery arrived while one was in flight.
type attemptTracker struct {
	mu       sync.Mutex
	open     map[string]int
	overlaps []string
}

func (a *attemptTracker) wrap(f func(int, request) (int, http.Header, string)) func(int, request) (int, http.Header, string) {
	return func(n int, r request) (int, http.Header, string) {
		id := r.header.Get(IDHeader)
		a.mu.Lock()
		if a.open[id] > 0 {
			a.overlaps = append(a.overlaps, fmt.Sprintf("%s at %s", id, r.at.Format(time.RFC3339Nano)))
		}
		a.open[id]++
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			a.open[id]--
			a.mu.Unlock()
		}()
		return f(n, r)
	}
}

func crashConfig() Config {
	c := testConfig()
	c.AttemptTimeout = 2 * time.Second
	return c
}

func TestMain(m *testing.M) {
	if os.Getenv(envCrashChild) != "" {
		os.Exit(crashChild())
	}
	os.Exit(m.Run())
}

// crashChild delivers from the shared ledger until it is killed.
func crashChild() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lc := crashLedgerConfig()
	lc.DSN, lc.Schema, lc.NoMigrate = os.Getenv(envCrashDSN), os.Getenv(envCrashSchema), true
	lc.FetchPollInterval = 50 * time.Millisecond
	l, err := ledger.Open(ctx, lc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open ledger:", err)
		return 2
	}
	cfg := crashConfig()
	cfg.Workers, _ = strconv.Atoi(os.Getenv(envCrashWorkers))
	tr, err := New(ctx, cfg, l)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: New:", err)
		return 2
	}
	if err := l.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "child: start:", err)
		return 2
	}
	if n, _ := strconv.Atoi(os.Getenv(envCrashSend)); n > 0 {
		evs := make([]*cloudevent.Event, n)
		for i := range evs {
			evs[i] = cloudevent.New("/test", "user.created")
			evs[i].SetTenantID("t1")
		}
		if err := tr.Send(ctx, evs); err != nil { // claimed: first attempts in this process
			fmt.Fprintln(os.Stderr, "child: send:", err)
			return 2
		}
	}
	<-ctx.Done() // killed long before
	return 3
}

// TestH3_CrashTakeoverOfFirstAttempts: as TestH3_CrashTakeover, but the killed process
// inserted the deliveries itself, so it held them as claimed jobs (first attempts in
// process, inline.go): some in flight, the others waiting for one of its slots. The
// restarted process takes every one over through presence, within seconds.
func TestH3_CrashTakeoverOfFirstAttempts(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		const n, workers = 6, 3
		tb := setupWith(t, b, crashConfig(), crashLedgerConfig(), false)
		held, release, track := holdRequests(tb, n)
		tb.endpoint(t, "/hook")
		cmd, out := startCrashChild(t, tb, workers, n)
		inFlight := waitHeld(t, held, workers, out)
		killCrashChild(t, tb, cmd, release, track)
		// Every delivery is a running job of the dead child, claimed at insert.
		var claimed int
		if err := tb.l.DB().QueryRowContext(tb.ctx, `SELECT count(*) FROM `+tb.l.Table("river_job")+`
			WHERE state = 'running' AND attempted_at = created_at`).Scan(&claimed); err != nil || claimed != n {
			t.Fatalf("claimed running jobs of the killed child = %d, %v; want %d", claimed, err, n)
		}
		takeOver(t, tb, n, len(inFlight), track)
	})
}

// TestH3_CrashTakeover: the delivering process is kill -9'd while every delivery is in
// flight (the receiver holds the requests); another process started after it (a
// restarted hub) takes the deliveries over within seconds with the ledger's defaults
// (presence, not the one-minute lease), every one completes, and the receiver never
// handles two requests of one delivery at once.
func TestH3_CrashTakeover(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		const n = 5
		tb := setupWith(t, b, crashConfig(), crashLedgerConfig(), false)
		held, release, track := holdRequests(tb, n)
		tb.endpoint(t, "/hook")
		evs := make([]*cloudevent.Event, n)
		for i := range evs {
			evs[i] = newEvent(t, "user.created")
		}
		tb.send(t, evs...)

		cmd, out := startCrashChild(t, tb, n, 0)
		inFlight := waitHeld(t, held, n, out)
		killCrashChild(t, tb, cmd, release, track)

		takeOver(t, tb, n, len(inFlight), track)
	})
}

// holdRequests makes tb's receiver hold every request until release is closed,
// reporting each arrival on held (room for n) and tracking overlapping attempts.
func holdRequests(tb *testBundle, n int) (held chan request, release chan struct{}, track *attemptTracker) {
	held, release = make(chan request, n), make(chan struct{})
	tb.recv.mu.Lock()
	tb.recv.arrived = held
	tb.recv.mu.Unlock()
	track = &attemptTracker{open: map[string]int{}}
	tb.recv.setRespond(track.wrap(func(int, request) (int, http.Header, string) {
		<-release // hold the child's requests until it is dead
		return 204, nil, ""
	}))
	return held, release, track
}

// startCrashChild runs this test binary as a second process on tb's database,
// delivering with workers slots (and first sending send events itself).
func startCrashChild(t *testing.T, tb *testBundle, workers, send int) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	lc := tb.l.Config()
	var out bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrashChild+"=1", envCrashDSN+"="+lc.DSN, envCrashSchema+"="+lc.Schema,
		envCrashWorkers+"="+strconv.Itoa(workers), envCrashSend+"="+strconv.Itoa(send))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, &out
}

// waitHeld waits until the receiver holds n requests of distinct deliveries.
func waitHeld(t *testing.T, held <-chan request, n int, out *bytes.Buffer) map[string]bool {
	t.Helper()
	inFlight := map[string]bool{}
	timeout := time.After(30 * time.Second)
	for len(inFlight) < n {
		select {
		case r := <-held:
			inFlight[r.header.Get(IDHeader)] = true
		case <-timeout:
			t.Fatalf("child got %d of %d deliveries in flight; its output:\n%s", len(inFlight), n, out.String())
		}
	}
	return inFlight
}

// killCrashChild kills the child with SIGKILL (no cleanup in it), then lets the
// receiver answer: the held handlers answer a dead connection.
func killCrashChild(t *testing.T, tb *testBundle, cmd *exec.Cmd, release chan struct{}, track *attemptTracker) {
	t.Helper()
	tb.recv.mu.Lock()
	tb.recv.arrived = nil
	tb.recv.mu.Unlock()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	tb.recv.setRespond(track.wrap(always(204, "")))
	close(release)
}

// takeOver starts tb's ledger (the restart) and checks that it delivers all n
// deliveries within crashDrainBound, never two requests of one delivery at once, each
// after the killed attempt.
func takeOver(t *testing.T, tb *testBundle, n, inFlight int, track *attemptTracker) {
	t.Helper()
	restarted := time.Now()
	if err := tb.l.Start(tb.ctx); err != nil {
		t.Fatal(err)
	}
	var ds []*Delivery
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds = tb.deliveries(t, DeliveryFilter{})
		done := 0
		for _, d := range ds {
			if d.State == DeliveryDelivered {
				done++
			}
		}
		if done == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("published %d, in flight in the killed child %d, delivered after takeover %d (of %d deliveries)",
				n, inFlight, done, len(ds))
		}
		time.Sleep(50 * time.Millisecond) // polling the ledger: its state is the outside world here
	}
	drain := time.Since(restarted)
	t.Logf("drained %d jobs in %.1fs after restart (lease %s)", n, drain.Seconds(), tb.l.Config().RescueStuckJobsAfter)
	if drain >= crashDrainBound {
		t.Fatalf("drained %.1fs after restart, want below %s: the killed process's deliveries waited for the lease", drain.Seconds(), crashDrainBound)
	}
	track.mu.Lock()
	overlaps := track.overlaps
	track.mu.Unlock()
	if len(overlaps) > 0 {
		t.Fatalf("requests of one delivery handled at once: %v", overlaps)
	}
	for _, d := range ds {
		if d.Attempt < 2 {
			t.Fatalf("delivery %d completed in attempt %d: want the killed attempt plus the takeover", d.ID, d.Attempt)
		}
	}
}
