package redisstream

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// flushLoop is one of the Pipelines goroutines that turn Sends into round trips. It
// blocks for one request, then takes every request already waiting (up to MaxBatch
// events) and writes them all in one pipeline. Nothing waits for a batch to fill: a
// lone Send leaves at once, and batches form only from Sends that arrived while the
// previous round trip was in flight, which is when batching pays.
//
// go-redis v9 has its own AutoPipeliner, which coalesces individual commands. This
// loop coalesces whole Sends instead, so one Send's events stay in one round trip and
// each Send gets back exactly its own errors; it is a few dozen lines.
func (t *Transport) flushLoop() {
	defer t.loops.Done()
	reqs := make([]*sendReq, 0, 64)
	for {
		var first *sendReq
		select {
		case first = <-t.reqs:
		case <-t.quit:
			return
		}
		reqs = append(reqs[:0], first)
		n := len(first.args)
	drain:
		for n < t.cfg.MaxBatch {
			select {
			case r := <-t.reqs:
				reqs = append(reqs, r)
				n += len(r.args)
			default:
				break drain
			}
		}
		t.flush(reqs, n)
	}
}

// flush writes the requests' XADDs (plus any MINID trims due) in one round trip and
// answers each request with the first error among its own commands. The round trip
// runs on a background context: the go-redis read and write timeouts bound it, and one
// caller giving up must not fail the others' appends.
func (t *Transport) flush(reqs []*sendReq, n int) {
	ctx := context.Background()
	var trims []string
	if t.trim != nil {
		trims = t.trim.due(reqs)
	}
	if n == 1 && len(trims) == 0 {
		a := &reqs[0].args[0]
		reqs[0].done <- classify(t.client.XAdd(ctx, a).Err())
		return
	}
	pipe := t.client.Pipeline()
	cmds := make([]*redis.StringCmd, 0, n)
	for _, r := range reqs {
		for i := range r.args {
			cmds = append(cmds, pipe.XAdd(ctx, &r.args[i]))
		}
	}
	minID := t.trim.threshold()
	for _, s := range trims {
		pipe.XTrimMinIDApprox(ctx, s, minID, 0)
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
		r.done <- classify(err)
	}
}

// minIDTrimmer decides when each stream is due for an age trim (XTRIM MINID ~). XADD
// takes only one of MAXLEN and MINID, so with both configured the age trim rides along
// as a separate XTRIM in the same pipeline, at most once per minIDTrimInterval.
type minIDTrimmer struct {
	age  time.Duration
	mu   sync.Mutex
	last map[string]time.Time
}

func newMinIDTrimmer(age time.Duration) *minIDTrimmer {
	return &minIDTrimmer{age: age, last: make(map[string]time.Time)}
}

func (m *minIDTrimmer) due(reqs []*sendReq) []string {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, r := range reqs {
		for i := range r.args {
			s := r.args[i].Stream
			if now.Sub(m.last[s]) >= minIDTrimInterval {
				m.last[s] = now
				out = append(out, s)
			}
		}
	}
	return out
}

// threshold is the smallest entry id kept: entries appended more than age ago go.
func (m *minIDTrimmer) threshold() string {
	if m == nil {
		return ""
	}
	return strconv.FormatInt(time.Now().Add(-m.age).UnixMilli(), 10)
}
