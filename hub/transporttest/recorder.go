package transporttest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
)

// recorder collects what a handler received and signals each arrival, so checks wait on
// a channel instead of sleeping.
type recorder struct {
	mu     sync.Mutex
	events []*cloudevent.Event
	byID   map[string]int
	signal chan struct{}
	// timeout bounds each wait (Features.timeout).
	timeout time.Duration
	// fail, when set, decides whether the handler fails this delivery.
	fail func(ev *cloudevent.Event, delivery int) error
}

func newRecorder(f Features) *recorder {
	return &recorder{byID: map[string]int{}, signal: make(chan struct{}, 1), timeout: f.timeout()}
}

func (r *recorder) handle(_ context.Context, ev *cloudevent.Event) error {
	r.mu.Lock()
	r.byID[ev.ID]++
	n := r.byID[ev.ID]
	var err error
	if r.fail != nil {
		err = r.fail(ev, n)
	}
	if err == nil {
		r.events = append(r.events, ev)
	}
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
	return err
}

// snapshot returns the events handled successfully so far.
func (r *recorder) snapshot() []*cloudevent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*cloudevent.Event(nil), r.events...)
}

// deliveries returns how often the event id was handed to the handler.
func (r *recorder) deliveries(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[id]
}

// waitUntil waits until cond holds over the successfully handled events, failing t
// with what was seen after the suite's timeout.
func (r *recorder) waitUntil(t *testing.T, what string, cond func([]*cloudevent.Event) bool) []*cloudevent.Event {
	t.Helper()
	deadline := time.NewTimer(r.timeout)
	defer deadline.Stop()
	for {
		evs := r.snapshot()
		if cond(evs) {
			return evs
		}
		select {
		case <-r.signal:
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s: handled %d events", r.timeout, what, len(evs))
		}
	}
}

// waitIDs waits until every id in want was handled successfully at least once.
func (r *recorder) waitIDs(t *testing.T, what string, want []*cloudevent.Event) []*cloudevent.Event {
	t.Helper()
	return r.waitUntil(t, what, func(evs []*cloudevent.Event) bool {
		return len(missing(want, evs)) == 0
	})
}

// missing returns the ids of want not present in got.
func missing(want, got []*cloudevent.Event) []string {
	seen := make(map[string]bool, len(got))
	for _, ev := range got {
		seen[ev.ID] = true
	}
	var out []string
	for _, ev := range want {
		if !seen[ev.ID] {
			out = append(out, ev.ID)
		}
	}
	return out
}
