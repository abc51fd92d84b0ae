package watermill

import (
	"context"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"
)

// maxIdleWorkers bounds the goroutines kept waiting for the next Publish.
const maxIdleWorkers = 64

// publishReq is one Publish handed to a worker.
type publishReq struct {
	topic string
	msgs  []*message.Message
}

// worker is a goroutine that runs the Publish calls sent on in, one at a time, and
// answers each on done (buffered: the worker never waits for its caller).
type worker struct {
	in   chan publishReq
	done chan error
}

// workers runs Publish calls off the caller's goroutine, so Send can stop waiting when
// its context ends. The goroutines outlive one call: a fresh goroutine per Send would
// pay for its creation and, with deep publishers, for growing its stack every time
// (a profile on gochannel showed stack copying at 14 % of Send), and a worker keeps its
// two channels, so a Send allocates none.
//
// A worker belongs to one caller from take to put. A caller that stops waiting (its
// context ended) closes the worker's in instead of putting it back: the worker answers
// into its buffer, sees in closed and ends, and nobody reads a stale answer.
type workers struct {
	pub message.Publisher

	mu      sync.Mutex
	idle    []*worker
	stopped bool
}

func newWorkers(pub message.Publisher) *workers { return &workers{pub: pub} }

// publish runs Publish on a worker and returns its error, or ctx's when ctx ends
// first (waited false). After stop, it runs on a goroutine of its own (the publisher,
// closed by then, answers with its error).
func (w *workers) publish(ctx context.Context, r publishReq) (waited bool, err error) {
	wk := w.take()
	wk.in <- r
	select {
	case err := <-wk.done:
		w.put(wk)
		return true, err
	case <-ctx.Done():
		close(wk.in)
		return false, ctx.Err()
	}
}

// take returns an idle worker or starts one.
func (w *workers) take() *worker {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		wk := w.idle[n-1]
		w.idle[n-1] = nil
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		return wk
	}
	w.mu.Unlock()
	wk := &worker{in: make(chan publishReq, 1), done: make(chan error, 1)}
	go w.loop(wk)
	return wk
}

// put makes wk idle again, or ends it when enough are idle or the workers stopped.
func (w *workers) put(wk *worker) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || len(w.idle) >= maxIdleWorkers {
		close(wk.in)
		return
	}
	w.idle = append(w.idle, wk)
}

// loop serves wk's requests until its in is closed.
func (w *workers) loop(wk *worker) {
	for r := range wk.in {
		wk.done <- w.pub.Publish(r.topic, r.msgs...)
	}
}

// stop ends the idle workers; busy ones end when their caller is done with them.
func (w *workers) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	for _, wk := range w.idle {
		close(wk.in)
	}
	w.idle = nil
}
