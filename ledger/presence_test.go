package ledger_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// attemptLog records every run of every job, so a test can tell who ran what when and
// whether two runs of one job ever overlapped.
type attemptLog struct {
	mu   sync.Mutex
	runs map[int64][]*run
	seen chan *run
}

type run struct {
	job        int64
	attempt    int
	by         string // the ledger's name in the test
	start, end time.Time
	ended      chan struct{}
}

func newAttemptLog() *attemptLog {
	return &attemptLog{runs: map[int64][]*run{}, seen: make(chan *run, 100)}
}

// begin records a run's start; first says whether it is the job's first run.
func (a *attemptLog) begin(job int64, attempt int, by string) (r *run, first bool) {
	r = &run{job: job, attempt: attempt, by: by, start: time.Now(), ended: make(chan struct{})}
	a.mu.Lock()
	first = len(a.runs[job]) == 0
	a.runs[job] = append(a.runs[job], r)
	a.mu.Unlock()
	a.seen <- r
	return r, first
}

func (a *attemptLog) finish(r *run) {
	a.mu.Lock()
	r.end = time.Now()
	a.mu.Unlock()
	close(r.ended)
}

// overlaps lists the pairs of runs of one job that were in flight at the same time.
func (a *attemptLog) overlaps() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for job, rs := range a.runs {
		for i, x := range rs {
			for _, y := range rs[i+1:] {
				xEnd, yEnd := x.end, y.end
				if xEnd.IsZero() || yEnd.IsZero() || (x.start.Before(yEnd) && y.start.Before(xEnd)) {
					out = append(out, fmt.Sprintf("job %d: attempt %d by %s and attempt %d by %s", job, x.attempt, x.by, y.attempt, y.by))
				}
			}
		}
	}
	return out
}

func (a *attemptLog) next(t *testing.T, within time.Duration) *run {
	t.Helper()
	select {
	case r := <-a.seen:
		return r
	case <-time.After(within):
		t.Fatalf("no job run within %s", within)
		return nil
	}
}

// holdWorker's first run of a job lasts until its context is cancelled; later runs
// return at once.
type holdWorker struct {
	river.WorkerDefaults[pingArgs]
	name string
	log  *attemptLog
}

func (w *holdWorker) Work(ctx context.Context, job *river.Job[pingArgs]) error {
	r, first := w.log.begin(job.ID, job.Attempt, w.name)
	defer w.log.finish(r)
	if first {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// openPair opens two started Ledgers on one database (a PostgreSQL schema or a SQLite
// file), each with its own holdWorker, both recording into one attemptLog.
func openPair(t *testing.T, b ledger.Backend, cfg ledger.Config) (a, c *ledger.Ledger, log *attemptLog) {
	t.Helper()
	cfg = ledgertest.Config(t, b, cfg)
	log = newAttemptLog()
	open := func(name string) *ledger.Ledger {
		ctx := testenv.Context(t, 30*time.Second)
		l, err := ledger.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// The held first attempts end only by cancellation: do not wait for them.
			sctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = l.Stop(sctx)
			_ = l.Close()
		})
		river.AddWorker(l.Workers(), &holdWorker{name: name, log: log})
		if err := l.AddQueue(river.QueueDefault, 4); err != nil {
			t.Fatal(err)
		}
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return l
	}
	a = open("a")
	cfg.NoMigrate = true
	c = open("c")
	return a, c, log
}

// TestO2_PresenceFencesBeforeTakeover: the presence session of the Ledger running a job
// is terminated under it (pg_terminate_backend of that backend only: the process lives
// on). While the session lived nobody touched the job, however long it ran; once it is
// cut, the Ledger cancels its run before the other Ledger (or itself, rejoined under a
// new worker id) starts the job again, within seconds rather than the one-minute lease,
// and never while the old run is in flight.
func TestO2_PresenceFencesBeforeTakeover(t *testing.T) {
	t.Parallel()
	const grace = time.Second
	a, c, log := openPair(t, ledger.Postgres, ledger.Config{PresenceInterval: 100 * time.Millisecond, PresenceGrace: grace})
	ctx := testenv.Context(t, 60*time.Second)
	if _, err := a.Insert(ctx, pingArgs{}, nil); err != nil {
		t.Fatal(err)
	}
	first := log.next(t, 20*time.Second)
	victim := map[string]*ledger.Ledger{"a": a, "c": c}[first.by]
	oldID := victim.WorkerID()
	if !strings.HasPrefix(oldID, "hubp1_") {
		t.Fatalf("worker id %q does not mark a presence", oldID)
	}

	// A live worker's job is left alone, however long past the grace it runs.
	select {
	case r := <-log.seen:
		t.Fatalf("job run again (attempt %d by %s) while its worker's presence was held", r.attempt, r.by)
	case <-time.After(3 * grace):
	}

	fencedIDs := make(chan string, 4)
	victim.OnFence(func(id string) { fencedIDs <- id })
	pid := ledger.PresencePID(victim)
	if pid == 0 {
		t.Fatal("no presence session")
	}
	conn, err := pgx.Connect(ctx, testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int32(pid)).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
	}
	cut := time.Now()

	// Liveness: within the grace (twice that under CI, whose loaded runners can delay a
	// ping; what must never happen, two runs at once, is checked below without a clock).
	within := grace
	if testenv.InCI() {
		within *= 2
	}
	select {
	case <-first.ended:
	case <-time.After(within):
		t.Fatalf("the fenced worker did not cancel its run within %s (grace %s)", within, grace)
	}
	select {
	case id := <-fencedIDs:
		if id != oldID {
			t.Fatalf("OnFence called with %q, want the fenced worker id %s", id, oldID)
		}
	case <-time.After(within):
		t.Fatalf("OnFence not called within %s (grace %s)", within, grace)
	}
	// The fenced worker recorded its cancelled run itself (its pool still works), so
	// the job may run again before the grace; if its record had been lost, the others
	// would have taken the job after the grace. Either way: never during the old run.
	second := log.next(t, 20*time.Second)
	took := second.start.Sub(cut)
	t.Logf("presence cut; run cancelled after %s; attempt %d started by %s %s after the cut",
		first.end.Sub(cut).Round(time.Millisecond), second.attempt, second.by, took.Round(time.Millisecond))
	if second.job != first.job {
		t.Fatalf("second run is of job %d, want job %d", second.job, first.job)
	}
	if took > 10*time.Second {
		t.Fatalf("job taken %s after the cut: presence did not beat the lease", took)
	}
	<-second.ended
	if o := log.overlaps(); len(o) > 0 {
		t.Fatalf("runs of one job in flight at once: %v", o)
	}
	j, err := a.JobGet(ctx, first.job)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.AttemptedBy) < 2 || j.AttemptedBy[0] != oldID || j.AttemptedBy[len(j.AttemptedBy)-1] == oldID {
		t.Fatalf("attempted_by = %v, want the fenced worker %s first and another after it", j.AttemptedBy, oldID)
	}

	// The fenced Ledger works again, under a new id.
	testenv.WaitFor(t, 10*time.Second, "the fenced ledger to rejoin", func() bool {
		id := victim.WorkerID()
		return id != "" && id != oldID
	})
}

// TestO2_PresenceTakeoverAtOnce: when a worker's presence ends (here given up while
// its run goes on, as the other Ledger sees a death), the other Ledger takes its
// running job at its next presence sweep, records why, and leaves the lease out of it.
// On SQLite the lock file proves the death outright, so there is no grace.
func TestO2_PresenceTakeoverAtOnce(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		const interval, grace = 100 * time.Millisecond, 500 * time.Millisecond
		a, c, log := openPair(t, b, ledger.Config{PresenceInterval: interval, PresenceGrace: grace})
		ctx := testenv.Context(t, 60*time.Second)
		res, err := a.Insert(ctx, pingArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		first := log.next(t, 20*time.Second)
		victim, other := a, c
		if first.by == "c" {
			victim, other = c, a
		}
		deadID := victim.WorkerID()
		ledger.DropPresence(victim)
		dropped := time.Now()
		second := log.next(t, 20*time.Second)
		took := second.start.Sub(dropped)
		t.Logf("attempt %d started by %s %s after the presence ended", second.attempt, second.by, took.Round(time.Millisecond))
		// The victim lives on here, so either Ledger may work the job once it is free.
		if second.job != first.job || second.attempt != 2 {
			t.Fatalf("second run: job %d attempt %d, want job %d attempt 2", second.job, second.attempt, first.job)
		}
		bound := 5 * interval
		if b == ledger.Postgres {
			bound += grace
		}
		slack := time.Second
		if testenv.InCI() {
			slack = 3 * time.Second
		}
		if took > bound+slack {
			t.Fatalf("taken over %s after the presence ended, want within ~%s", took, bound)
		}
		<-second.ended
		j, err := other.JobGet(ctx, res.Job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(j.Errors) == 0 || !strings.Contains(j.Errors[0].Error, deadID) || !strings.Contains(j.Errors[0].Error, "is gone") {
			t.Fatalf("rescue not recorded in the job's errors: %+v", j.Errors)
		}
		if string(j.Metadata) == "" || !strings.Contains(string(j.Metadata), `"river:rescue_count"`) {
			t.Fatalf("rescue count missing from metadata %s", j.Metadata)
		}
	})
}
