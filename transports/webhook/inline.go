package webhook

import (
	"context"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/ledger"
)

// The first attempt in process. A delivery inserted by a Send or SendTx of a process
// that works deliveries is inserted already running under the ledger's worker id (a
// claimed job, ledger/claimed.go), and the inserting process attempts it right after
// the transaction commits, in a pool of its own (Config.Workers slots beside River's),
// then writes the outcome with River's own state change, in batches. River's fetch of
// every new delivery (a scan of the queue's index and the rows sent back) and its poll
// wait are gone; everything after the first attempt is River's as before: a retry is a
// retryable job at the schedule's next time, a snooze (breaker open, rate limit,
// in-flight cap) gives the attempt back, a cancel ends it, and the attempt numbers,
// metadata and errors are the ones River's executor would have written (H3).
//
// Nothing is lost and nothing is sent twice while the process lives: a claimed job is
// invisible until its transaction commits and is then this process's alone, as a
// fetched job is. A process that dies holding claimed jobs leaves running jobs of a
// dead worker, which the presence sweep takes over at once, or the lease after
// RescueStuckJobsAfter (the same path as a worker killed mid-request). Deliveries that
// wait for a slot longer than inlineMaxWait, or that are still waiting when the ledger
// stops or the transport closes, are given back to River's producers with their attempt unspent, so every attempt ends
// well inside the lease. Ordered endpoints keep River's path (their order is decided
// by what River has delivered), and so does a transaction the ledger did not begin
// (no commit callback to start the attempt from).

// inliner runs claimed deliveries' first attempts.
type inliner struct {
	t       *Transport
	retry   *worker       // its NextRetry, for a first attempt that failed
	slots   chan struct{} // one per attempt running
	maxWait time.Duration // longest a claimed delivery waits for a slot
	// maxBacklog bounds the bytes of the backlog (Config.FirstAttemptBacklogBytes; 0:
	// none): above it new deliveries are not claimed but queued for River, whose fetch
	// takes only what its workers can run.
	maxBacklog int64

	mu        sync.Mutex
	backlog   []claimed       // waiting for a slot, oldest first; their size in t.backlogBytes
	full      bool            // the backlog was over maxBacklog when last logged
	drained   map[string]bool // worker ids the ledger stopped working under
	holding   map[string]held // worker id -> what cancels its attempts (fenced)
	lost      map[string]bool // worker ids whose presence the ledger lost
	closed    bool            // Close: the completer is gone
	unwritten int             // outcomes sent to the completer and not yet written
	written   *sync.Cond

	running sync.WaitGroup
	results chan ledger.Outcome
	quit    chan struct{} // Close: the completer stops
	flush   chan struct{} // drain: write the batch being filled now, not after inlineLinger
	done    chan struct{} // the completer has stopped
}

// held is the context of the attempts made under one worker id, cancelled when the
// ledger loses that id's presence, and how many of them run.
type held struct {
	ctx     context.Context
	cancel  context.CancelFunc
	running int
}

// claimed is a claimed delivery, when it was claimed, and its size encoded (what it
// counts for in the backlog's bound).
type claimed struct {
	job  *river.Job[deliveryArgs]
	at   time.Time
	size int64
}

// newInliner returns the dispatcher of t, or nil when t does not attempt deliveries in
// process (NoWork, QueueFirstAttempt). The ledger's Stop drains it before giving the
// worker id's presence up.
func newInliner(t *Transport) *inliner {
	if t.cfg.NoWork || t.cfg.QueueFirstAttempt {
		return nil
	}
	lease := t.l.Config().RescueStuckJobsAfter
	in := &inliner{
		t:          t,
		retry:      &worker{t: t},
		slots:      make(chan struct{}, t.cfg.Workers),
		maxWait:    min(inlineMaxWait, (lease-t.cfg.jobTimeout())/2),
		maxBacklog: max(t.cfg.FirstAttemptBacklogBytes, 0),
		results:    make(chan ledger.Outcome, 4*t.cfg.Workers),
		quit:       make(chan struct{}),
		flush:      make(chan struct{}, 1),
		done:       make(chan struct{}),
	}
	in.written = sync.NewCond(&in.mu)
	in.drained, in.holding, in.lost = map[string]bool{}, map[string]held{}, map[string]bool{}
	go in.complete()
	t.l.OnStop(in.drain)
	t.l.OnFence(in.fenced)
	return in
}

// inlineMaxWait bounds a claimed delivery's wait for a slot before River gets it.
const inlineMaxWait = 5 * time.Second

// Outcomes are written in batches, as River's own completer writes its jobs': a batch
// is written once inlineFlushAt outcomes wait, or inlineLinger after its first one
// came. Each outcome is an UPDATE of a river_job row that is no HOT update (the state
// is in River's indexes), and the statement's cost per row falls steeply with the
// batch's size: on 2 cores, single-event posts measured about 110 µs of statement time
// per row in the batches of ~5 that writing at once gave, 60 µs in batches of ~175
// (docs/BENCHMARKS.md). The receiver has the event before its outcome is written, so
// the wait delays only what the console shows (River's completer waits up to 250 ms).
const (
	// inlineBatch bounds the outcomes written in one statement.
	inlineBatch = 256
	// inlineFlushAt is the number of waiting outcomes that are written at once.
	inlineFlushAt = 100
	// inlineLinger is the longest an outcome waits for others to share its write.
	inlineLinger = 50 * time.Millisecond
)

// eligible reports whether a delivery may be claimed: not to an ordered endpoint, and
// not while the deliveries already waiting for a slot fill the backlog's bound. The
// bound is checked before the insert and the backlog grows after the commit, so it can
// be passed by what the transactions open at that moment claim (each at most a
// request's batch).
func (in *inliner) eligible(a *deliveryArgs) bool {
	return in != nil && a.OrderKey == "" && (in.maxBacklog == 0 || in.t.backlogBytes.Load() < in.maxBacklog)
}

// dispatch starts the first attempts of rows (committed claimed deliveries, all under
// one worker id), or queues them for a slot. Rows claimed under a worker id the ledger
// has stopped working under (a transaction that claimed before Stop began and
// committed after its drain) go back to River. It never blocks for long: it runs in
// the committing request's AfterCommit.
func (in *inliner) dispatch(rows []*rivertype.JobRow, args []deliveryArgs) {
	if len(rows) == 0 {
		return
	}
	now := time.Now()
	in.mu.Lock()
	if in.drained[ledger.Holder(rows[0])] || in.closed {
		in.mu.Unlock()
		in.release(rows)
		return
	}
	for i, row := range rows {
		// The attempt reads the decoded args; the encoded copy (the request body again, in
		// base64) would only weigh on a backlog's memory.
		c := claimed{job: &river.Job[deliveryArgs]{JobRow: row, Args: args[i]}, at: now, size: int64(len(row.EncodedArgs))}
		row.EncodedArgs = nil
		select {
		case in.slots <- struct{}{}:
			in.running.Add(1)
			go in.run(c)
		default:
			in.backlog = append(in.backlog, c)
			in.t.backlogBytes.Add(c.size)
		}
	}
	in.logFull()
	in.mu.Unlock()
}

// logFull logs, under mu, when the backlog goes over its bound and when it is back
// under: while it is over, new deliveries wait in River's queue instead.
func (in *inliner) logFull() {
	if in.maxBacklog == 0 {
		return
	}
	full := in.t.backlogBytes.Load() >= in.maxBacklog
	if full == in.full {
		return
	}
	in.full = full
	if full {
		in.t.log.Warn("webhook: first attempts' backlog full; new deliveries go through the ledger's queue until it drains",
			"backlog_bytes", in.t.backlogBytes.Load(), "waiting", len(in.backlog), "first_attempt_backlog_bytes", in.maxBacklog)
	} else {
		in.t.log.Info("webhook: first attempts' backlog drained; new deliveries are attempted in process again")
	}
}

// run attempts c, then the backlog's oldest while there is one, then frees its slot.
func (in *inliner) run(c claimed) {
	defer in.running.Done()
	for {
		if in.holds(c) {
			in.send(in.attempt(c))
		}
		var stale []*rivertype.JobRow
		in.mu.Lock()
		next, ok := claimed{}, false
		for len(in.backlog) > 0 && !ok {
			next, in.backlog = in.backlog[0], in.backlog[1:]
			in.t.backlogBytes.Add(-next.size)
			if time.Since(next.at) > in.maxWait {
				stale = append(stale, next.job.JobRow)
				continue
			}
			ok = true
		}
		if !ok {
			<-in.slots
		}
		in.logFull()
		in.mu.Unlock()
		in.release(stale)
		if !ok {
			return
		}
		c = next
	}
}

// holds reports whether the ledger still works under the worker id that claimed c. A
// fenced ledger (its presence lost) has given its jobs up to the others' sweep: an
// attempt now could run beside theirs, so c is left to them, unattempted.
func (in *inliner) holds(c claimed) bool {
	by := ledger.Holder(c.job.JobRow)
	return by != "" && in.t.l.WorkerID() == by
}

// attempt is one first attempt, as River's executor runs a job: its timeout, its
// metadata collected, its outcome returned for the completer.
func (in *inliner) attempt(c claimed) ledger.Outcome {
	t := in.t
	meta := map[string]any{}
	base, done := in.hold(ledger.Holder(c.job.JobRow))
	defer done()
	ctx, cancel := context.WithTimeout(context.WithValue(base, metaKey{}, meta), t.cfg.jobTimeout())
	defer cancel()
	started := time.Now()
	err := t.work(ctx, c.job)
	return ledger.Outcome{Job: c.job.JobRow, Err: err, Meta: meta, Started: started,
		NextRetry: func() time.Time { return in.retry.NextRetry(c.job) }}
}

// hold returns the context of an attempt under worker id, and the func to call when
// the attempt ends.
func (in *inliner) hold(id string) (context.Context, func()) {
	in.mu.Lock()
	defer in.mu.Unlock()
	h, ok := in.holding[id]
	if !ok {
		h.ctx, h.cancel = context.WithCancel(context.Background())
		if in.lost[id] { // fenced between the attempt's holds check and here
			h.cancel()
		}
	}
	h.running++
	in.holding[id] = h
	return h.ctx, func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		h := in.holding[id]
		if h.running--; h.running == 0 {
			h.cancel()
			delete(in.holding, id)
			return
		}
		in.holding[id] = h
	}
}

// fenced cancels the attempts running under worker id, whose presence the ledger lost
// (ledger.OnFence): others may take those deliveries over after the presence grace, and
// an attempt still in flight then would be sent beside theirs. A cancelled attempt's
// outcome is recorded only if nobody took the delivery over meanwhile (ledger.Finish).
func (in *inliner) fenced(id string) {
	in.mu.Lock()
	in.lost[id] = true
	h, ok := in.holding[id]
	in.mu.Unlock()
	if ok {
		h.cancel()
	}
}

// release gives rows back to River's producers, attempt unspent.
func (in *inliner) release(rows []*rivertype.JobRow) {
	for _, r := range rows {
		in.send(ledger.Outcome{Job: r, Err: &rivertype.JobSnoozeError{}})
	}
}

// send hands an outcome to the completer, or writes it at once after Close.
func (in *inliner) send(o ledger.Outcome) {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		in.finish([]ledger.Outcome{o})
		return
	}
	in.unwritten++
	in.mu.Unlock()
	in.results <- o
}

// complete writes the outcomes in batches until Close.
func (in *inliner) complete() {
	defer close(in.done)
	batch := make([]ledger.Outcome, 0, inlineBatch)
	for {
		select {
		case o := <-in.results:
			batch = append(batch[:0], o)
		case <-in.quit:
			return
		}
		linger := time.NewTimer(inlineLinger)
	fill:
		for len(batch) < inlineFlushAt {
			select {
			case o := <-in.results:
				batch = append(batch, o)
			case <-linger.C:
				break fill
			case <-in.flush:
				break fill
			}
		}
		linger.Stop()
	more: // and whatever else is already waiting
		for len(batch) < inlineBatch {
			select {
			case o := <-in.results:
				batch = append(batch, o)
			default:
				break more
			}
		}
		in.finish(batch)
		in.mu.Lock()
		in.unwritten -= len(batch)
		in.written.Broadcast()
		in.mu.Unlock()
	}
}

// finish writes one batch, retrying a failed write a few times: a batch never written
// leaves its deliveries running, to be taken over when the lease ends (sent again).
func (in *inliner) finish(batch []ledger.Outcome) {
	var err error
	for try := range 4 {
		if try > 0 {
			time.Sleep(time.Duration(try) * 200 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = in.t.l.Finish(ctx, batch)
		cancel()
		if err == nil {
			return
		}
	}
	ids := make([]int64, len(batch))
	for i, o := range batch {
		ids[i] = o.Job.ID
	}
	in.t.log.Error("webhook: recording in-process attempts failed; the deliveries will be taken over when their lease ends",
		"deliveries", ids, "err", err)
}

// drain gives the backlog back to River, waits for the attempts running, and for every
// outcome to be written. Deliveries claimed under the same worker id and committed
// later go back to River too (dispatch); a Start after the Stop works under a new one.
func (in *inliner) drain() {
	id := in.t.l.WorkerID()
	in.mu.Lock()
	if id != "" {
		in.drained[id] = true
	}
	backlog := in.backlog
	in.backlog = nil
	in.t.backlogBytes.Store(0)
	in.full = false // stopping: no "drained, claimed again" line
	in.mu.Unlock()
	rows := make([]*rivertype.JobRow, len(backlog))
	for i, c := range backlog {
		rows[i] = c.job.JobRow
	}
	in.release(rows)
	in.running.Wait()
	select { // every outcome is in; a Stop need not wait out the linger
	case in.flush <- struct{}{}:
	default:
	}
	in.mu.Lock()
	for in.unwritten > 0 {
		in.written.Wait()
	}
	in.mu.Unlock()
}

// close drains and stops the completer; outcomes after it are written one by one.
// Idempotent.
func (in *inliner) close() {
	if in == nil {
		return
	}
	in.drain()
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	in.closed = true
	for in.unwritten > 0 { // sent before closed was set
		in.written.Wait()
	}
	in.mu.Unlock()
	close(in.quit)
	<-in.done
}
