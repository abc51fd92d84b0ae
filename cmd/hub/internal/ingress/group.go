package ingress

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Group commit defaults.
const (
	// DefaultGroupMaxRequests bounds the requests published together: one failure
	// fails them all, and a larger group holds its rows' locks longer.
	DefaultGroupMaxRequests = 64
	// DefaultGroupMaxEvents bounds the events published together, so a group of large
	// batches stays one reasonable transaction.
	DefaultGroupMaxEvents = DefaultMaxBatch
	// DefaultGroupWindow is 0: a committer takes the requests that queued while the
	// previous group was being written and waits for no more. Under load that already
	// groups about one transaction's worth of requests; at low load nothing waits.
	DefaultGroupWindow = 0
)

// GroupConfig tunes group commit (the group_commit keys of the ingress). The zero
// value is the defaults.
type GroupConfig struct {
	// Window is how long a committer waits after a group's first request for more,
	// bounded by the two maxima. Default DefaultGroupWindow, at most 1s.
	Window time.Duration `yaml:"window"`
	// MaxRequests is the most requests in one group. Default DefaultGroupMaxRequests.
	MaxRequests int `yaml:"max_requests"`
	// MaxEvents is the most events in one group (a request larger than that is a group
	// of its own). Default DefaultGroupMaxEvents.
	MaxEvents int `yaml:"max_events"`
	// Committers is how many groups are written at once. Default 2: one fills while
	// the other commits.
	Committers int `yaml:"committers"`
}

func (c *GroupConfig) setDefaults() {
	if c.MaxRequests == 0 {
		c.MaxRequests = DefaultGroupMaxRequests
	}
	if c.MaxEvents == 0 {
		c.MaxEvents = DefaultGroupMaxEvents
	}
	if c.Committers == 0 {
		c.Committers = 2
	}
}

// Validate reports every invalid field, named by its key.
func (c GroupConfig) Validate() error {
	var errs []error
	if c.Window < 0 || c.Window > time.Second {
		errs = append(errs, fmt.Errorf("window %s: between 0 and 1s", c.Window))
	}
	if c.MaxRequests < 0 {
		errs = append(errs, fmt.Errorf("max_requests %d: must not be negative", c.MaxRequests))
	}
	if c.MaxEvents < 0 {
		errs = append(errs, fmt.Errorf("max_events %d: must not be negative", c.MaxEvents))
	}
	if c.Committers < 0 {
		errs = append(errs, fmt.Errorf("committers %d: must not be negative", c.Committers))
	}
	return errors.Join(errs...)
}

// Group publishes the events of concurrent requests together: one Publish (one
// dedupe upsert, one outbox transaction, one commit) for a group of requests instead
// of one per request. Each request is still answered only after the group's
// transaction committed, and with that transaction's error when it failed: a failed
// commit fails exactly the requests that were in it.
//
// A group falls back to publishing its requests one by one when a request's outcome
// must not depend on its neighbours: an event id reused with other content (a 409 for
// that request alone) or an event the hub refuses (InvalidArgument, for that request
// alone). Nothing was stored by the group's attempt in either case.
//
// Events are published under a context of the group's own (the first request's values,
// none of the requests' cancellation: a group being written is finished even when one
// client went away); each event's traceparent is taken from its own request first.
type Group struct {
	cfg   GroupConfig
	queue chan *groupReq
	stop  chan struct{}
	wg    sync.WaitGroup

	mu     sync.RWMutex
	closed bool
}

type groupReq struct {
	h     *Handler
	ctx   context.Context
	evs   []*cloudevent.Event
	batch bool
	done  chan groupDone
}

type groupDone struct {
	res published
	err error
}

// NewGroup starts group commit for the handlers whose Group it is (requests are
// grouped with those of the same handler). Close it before closing what they publish
// to.
func NewGroup(cfg GroupConfig) (*Group, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newGroup(cfg), nil
}

// newGroup is NewGroup without the checks (tests use windows past the limit).
func newGroup(cfg GroupConfig) *Group {
	cfg.setDefaults()
	g := &Group{cfg: cfg, queue: make(chan *groupReq, cfg.MaxRequests*cfg.Committers), stop: make(chan struct{})}
	for range cfg.Committers {
		g.wg.Add(1)
		go g.commit()
	}
	return g
}

// Close stops the committers once the requests already queued are published; later
// requests publish alone. Idempotent.
func (g *Group) Close() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	g.mu.Unlock()
	close(g.stop)
	g.wg.Wait()
}

// publish queues a request's events and waits for its group. A queued request is
// always answered, even once ctx ended: its events may be committing.
func (g *Group) publish(h *Handler, ctx context.Context, evs []*cloudevent.Event, batch bool) (published, error) {
	r := &groupReq{h: h, ctx: ctx, evs: evs, batch: batch, done: make(chan groupDone, 1)}
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return h.publish(ctx, evs, batch)
	}
	select {
	case g.queue <- r:
		g.mu.RUnlock()
	case <-ctx.Done():
		g.mu.RUnlock()
		return published{}, ctx.Err()
	}
	d := <-r.done
	return d.res, d.err
}

// commit is one committer: it takes the queued requests as a group, up to the maxima
// (waiting up to Window for more), and publishes them, until Close.
func (g *Group) commit() {
	defer g.wg.Done()
	var timer *time.Timer
	for {
		var first *groupReq
		select {
		case first = <-g.queue:
		case <-g.stop:
			for {
				select {
				case r := <-g.queue:
					g.run([]*groupReq{r})
				default:
					return
				}
			}
		}
		group, events := []*groupReq{first}, len(first.evs)
		var expired <-chan time.Time
		if g.cfg.Window > 0 {
			if timer == nil {
				timer = time.NewTimer(g.cfg.Window)
			} else {
				timer.Reset(g.cfg.Window)
			}
			expired = timer.C
		}
		var spill *groupReq // the request that did not fit: it starts the next group
	collect:
		for len(group) < g.cfg.MaxRequests && events < g.cfg.MaxEvents {
			var r *groupReq
			if expired == nil {
				select {
				case r = <-g.queue:
				default:
					break collect
				}
			} else {
				select {
				case r = <-g.queue:
				case <-expired:
					expired = nil
					break collect
				}
			}
			if events+len(r.evs) > g.cfg.MaxEvents {
				spill = r
				break
			}
			group, events = append(group, r), events+len(r.evs)
		}
		if expired != nil && !timer.Stop() {
			<-timer.C
		}
		g.run(group)
		if spill != nil {
			g.run([]*groupReq{spill})
		}
	}
}

// groupTimeout bounds one group's publish.
const groupTimeout = time.Minute

// run publishes a group and answers each of its requests.
func (g *Group) run(group []*groupReq) {
	live := group[:0:0]
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.done <- groupDone{err: err} // gave up before its group began
			continue
		}
		live = append(live, r)
	}
	for len(live) > 0 {
		// One Publish per handler (a Group shared by several handlers groups each one's
		// requests apart: they may publish to different hubs).
		h := live[0].h
		var same, rest []*groupReq
		for _, r := range live {
			if r.h == h {
				same = append(same, r)
			} else {
				rest = append(rest, r)
			}
		}
		g.runOne(h, same)
		live = rest
	}
}

// runOne publishes the requests of one handler together.
func (g *Group) runOne(h *Handler, live []*groupReq) {
	if len(live) == 1 {
		r := live[0]
		res, err := h.publish(r.ctx, r.evs, r.batch)
		r.done <- groupDone{res, err}
		return
	}
	var all []*cloudevent.Event
	for _, r := range live {
		for _, ev := range r.evs {
			hub.InjectTrace(r.ctx, ev) // the request's span, before the group's context replaces it
		}
		all = append(all, r.evs...)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(live[0].ctx), groupTimeout)
	defer cancel()
	verdicts, err := h.admit(ctx, all)
	if (err == nil && hub.AnyConflict(verdicts)) || hub.Code(err) == hub.InvalidArgument {
		// Nothing was stored: give each request its own outcome.
		for _, r := range live {
			res, err := h.publish(r.ctx, r.evs, r.batch)
			r.done <- groupDone{res, err}
		}
		return
	}
	off := 0
	for _, r := range live {
		var res published
		if err == nil && verdicts != nil {
			res = h.judged(r.evs, verdicts[off:off+len(r.evs)], r.batch)
		}
		off += len(r.evs)
		r.done <- groupDone{res, err}
	}
}
