package redisstream

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// submit sends r in the caller's goroutine when fewer than Pipelines round trips are
// in flight (the common, uncontended case: no hand-off, no extra wake-up), and
// otherwise queues it. Whoever finishes a round trip while requests are queued hands
// them, all together up to MaxBatch events, to a goroutine that keeps the slot until
// the queue is empty. So batches form only from Sends that arrived while the previous
// round trips were in flight, which is when batching pays, and nothing ever waits for
// a batch to fill.
//
// go-redis v9 has its own AutoPipeliner, which coalesces individual commands. This
// combiner coalesces whole Sends instead, so one Send's events stay in one round trip
// and each Send gets back exactly its own errors; it is a few dozen lines.
//
// It reports whether r was queued (then r.done closes once r.err is set).
func (t *Transport) submit(r *sendReq) (queued bool, err error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return false, hub.Errorf(hub.FailedPrecondition, "redisstream: transport %q is closed", t.cfg.Name)
	}
	if t.busy < t.cfg.Pipelines {
		t.busy++
		t.inflight.Add(1)
		t.mu.Unlock()
		t.flush([]*sendReq{r}, len(r.args))
		if next := t.next(); next != nil {
			go t.drain(next)
		}
		return false, nil
	}
	r.done = make(chan struct{})
	t.queue = append(t.queue, r)
	t.mu.Unlock()
	return true, nil
}

// next takes the queued requests (up to MaxBatch events, at least one request) for
// the round trip slot the caller holds, or releases the slot when nothing is queued.
func (t *Transport) next() []*sendReq {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.queue) == 0 {
		t.busy--
		t.inflight.Done()
		return nil
	}
	n, k := 0, 0
	for k < len(t.queue) && (k == 0 || n+len(t.queue[k].args) <= t.cfg.MaxBatch) {
		n += len(t.queue[k].args)
		k++
	}
	reqs := slices.Clone(t.queue[:k])
	t.queue = append(t.queue[:0], t.queue[k:]...)
	return reqs
}

// drain flushes queued requests until the queue is empty, then releases its slot.
func (t *Transport) drain(reqs []*sendReq) {
	for reqs != nil {
		n := 0
		for _, r := range reqs {
			n += len(r.args)
		}
		t.flush(reqs, n)
		reqs = t.next()
	}
}

// flush writes the requests' XADDs (plus any MINID trims due) in one round trip and
// answers each request with the first error among its own commands. The round trip
// runs on a background context: the go-redis read and write timeouts bound it, and one
// caller giving up must not fail the others' appends.
func (t *Transport) flush(reqs []*sendReq, n int) {
	ctx := context.Background()
	var trims []ageTrim
	if t.trim != nil {
		trims = t.trim.due(reqs)
	}
	if n == 1 && len(trims) == 0 {
		reqs[0].answer(classify(t.client.XAdd(ctx, &reqs[0].args[0]).Err()))
		return
	}
	pipe := t.client.Pipeline()
	cmds := make([]*redis.StringCmd, 0, n)
	for _, r := range reqs {
		for i := range r.args {
			cmds = append(cmds, pipe.XAdd(ctx, &r.args[i]))
		}
	}
	for _, tr := range trims {
		pipe.XTrimMinIDApprox(ctx, tr.stream, tr.minID, 0)
	}
	_, _ = pipe.Exec(ctx) // errors are read per command below
	k := 0
	for _, r := range reqs {
		var err error
		for range r.args {
			if err == nil {
				err = cmds[k].Err()
			}
			k++
		}
		r.answer(classify(err))
	}
}

// answer sets the request's result and wakes its waiting Send, if any.
func (r *sendReq) answer(err error) {
	r.err = err
	if r.done != nil {
		close(r.done)
	}
}

// minIDTrimmer decides when each stream is due for an age trim (XTRIM MINID ~). XADD
// takes only one of MAXLEN and MINID, so the age trim rides along as a separate XTRIM
// in the same pipeline, at most once per minIDTrimInterval per stream. The age is the
// stream's own (streams.Retention.For: 7 days for per-category streams by default, E8),
// so one transport writing several kinds of stream trims each by its rule.
type minIDTrimmer struct {
	ret  streams.Retention
	mu   sync.Mutex
	last map[string]time.Time
}

// ageTrim is one XTRIM MINID ~ due: entries of stream older than minID go.
type ageTrim struct{ stream, minID string }

func newMinIDTrimmer(ret streams.Retention) *minIDTrimmer {
	return &minIDTrimmer{ret: ret, last: make(map[string]time.Time)}
}

func (m *minIDTrimmer) due(reqs []*sendReq) []ageTrim {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ageTrim
	for _, r := range reqs {
		for i := range r.args {
			s := r.args[i].Stream
			if now.Sub(m.last[s]) < minIDTrimInterval {
				continue
			}
			if _, age := m.ret.For(s); age > 0 {
				m.last[s] = now
				out = append(out, ageTrim{s, strconv.FormatInt(now.Add(-age).UnixMilli(), 10)})
			}
		}
	}
	return out
}
