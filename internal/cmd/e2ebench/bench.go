package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/freeport"
)

type bench struct {
	o    options
	work string
	recv *receiver
	n    int // hubs started, for directory names
}

// result is one scenario on one store.
type result struct {
	name        string
	events      int
	failed      int     // requests not answered 202
	acceptedPS  float64 // events accepted per second of posting
	deliveredPS float64 // distinct events received per second, first post to last arrival
	p50, p99    time.Duration
	cpuPer1k    time.Duration
	missing     int // accepted events not received within the timeout
	dups        int // second arrivals of an event
	rssMiB      float64
	runs        []float64 // delivered/s of each batched run (-runs)
}

type storeResult struct {
	store   string
	results []result
}

// variant is one hub configuration of a store.
type variant struct {
	extraIngress string // lines under sources.ingress
}

// store runs every scenario on one store, each on a fresh hub and database.
func (b *bench) store(ctx context.Context, st string) (storeResult, error) {
	res := storeResult{store: st}
	type scenario struct {
		name string
		v    variant
		run  func(ctx context.Context, h *hubProc) result
	}
	scenarios := []scenario{
		{"batched", variant{}, b.batched},
		{"single", variant{}, b.single},
	}
	if st == "postgres" {
		scenarios = append(scenarios, scenario{"single, commit per request", variant{extraIngress: groupCommitOff}, b.single})
	}
	scenarios = append(scenarios, scenario{fmt.Sprintf("latency at %d/s", b.o.rate), variant{}, b.latency})
	for _, sc := range scenarios {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if !b.wanted(sc.name) {
			continue
		}
		h, err := b.startHub(ctx, st, sc.v)
		if err != nil {
			return res, err
		}
		progress("%s/%s: hub pid %d", st, sc.name, h.Cmd.Process.Pid)
		r, err := b.measure(ctx, h, func(ctx context.Context) result {
			if h.metrics == "" {
				return sc.run(ctx, h)
			}
			path := filepath.Join(b.o.pprofDir, fmt.Sprintf("%s-%s.pprof", st, strings.NewReplacer(" ", "-", ",", "", "/", "").Replace(sc.name)))
			done := make(chan error, 1)
			go func() {
				// -pprof-after skips the first runs, for a steady-state profile.
				select {
				case <-time.After(b.o.pprofAfter):
				case <-ctx.Done():
				}
				done <- h.profile(b.o.pprofFor, path)
			}()
			r := sc.run(ctx, h)
			if err := <-done; err != nil {
				progress("%s/%s: profile: %v", st, sc.name, err)
			} else {
				progress("%s/%s: CPU profile %s", st, sc.name, path)
			}
			return r
		})
		h.stop()
		if err != nil {
			return res, err
		}
		r.name = sc.name
		res.results = append(res.results, r)
		progress("%s/%s: %s", st, sc.name, r.summary())
	}
	return res, nil
}

// wanted reports whether -scenarios names the scenario (by its first word).
func (b *bench) wanted(name string) bool {
	first, _, _ := strings.Cut(name, " ")
	first = strings.TrimSuffix(first, ",")
	for _, s := range strings.Split(b.o.scenarios, ",") {
		if strings.TrimSpace(s) == first {
			return true
		}
	}
	return false
}

// groupCommitOff is the ingress option that turns group commit off, for the
// commit-per-request figure.
var groupCommitOff = "    no_group_commit: true\n"

func (b *bench) startHub(ctx context.Context, st string, v variant) (*hubProc, error) {
	b.n++
	dir := filepath.Join(b.work, fmt.Sprintf("hub%02d-%s", b.n, st))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ingress, err := freeport.Addr()
	if err != nil {
		return nil, err
	}
	admin, err := freeport.Addr()
	if err != nil {
		return nil, err
	}
	var metrics string
	if b.o.pprofDir != "" {
		if metrics, err = freeport.Addr(); err != nil {
			return nil, err
		}
	}
	var extraStore string
	if b.o.storeCfg != "" {
		extraStore = "  " + b.o.storeCfg + "\n"
	}
	switch st {
	case "sqlite":
		if v.extraIngress != "" {
			return nil, fmt.Errorf("sqlite: the embedded default has no variants")
		}
		if metrics != "" || b.o.webhookCfg != "" || b.o.storeCfg != "" {
			// The embedded default's store and routes written out, plus the metrics
			// listener the profile is taken from or the webhook keys being tuned.
			store := fmt.Sprintf("  sqlite: %s\n", filepath.Join(dir, "hub.db"))
			return startHub(b.o.hubBin, dir, hubConfig(store, ingress, admin, true, "", extraStore, metrics, b.o.webhookCfg), nil)
		}
		// The embedded default itself, as `hub run` starts it.
		return startEmbedded(b.o.hubBin, dir, ingress, admin)
	case "sqlite-split":
		// The embedded default's routes with the stream in a file of its own.
		store := fmt.Sprintf("  sqlite: %s\n  streams_sqlite: %s\n", filepath.Join(dir, "hub.db"), filepath.Join(dir, "streams.db"))
		return startHub(b.o.hubBin, dir, hubConfig(store, ingress, admin, true, v.extraIngress, extraStore, metrics, b.o.webhookCfg), nil)
	case "postgres":
		schema, drop, err := pgSchema(ctx, b.o.pgURL)
		if err != nil {
			return nil, err
		}
		extra := v.extraIngress
		if b.o.ingressCfg != "" {
			extra += "    " + b.o.ingressCfg + "\n"
		}
		cfg := hubConfig(fmt.Sprintf("  postgres: %s\n  schema: %s\n", b.o.pgURL, schema), ingress, admin, false, extra, extraStore, metrics, b.o.webhookCfg)
		h, err := startHub(b.o.hubBin, dir, cfg, drop)
		if err != nil {
			drop()
		}
		return h, err
	}
	return nil, fmt.Errorf("unknown store %q (postgres, sqlite, sqlite-split)", st)
}

// measure registers the receiver, warms the hub up (connections, River's producers),
// then runs f and adds the hub's CPU time per 1,000 delivered events and peak RSS.
func (b *bench) measure(ctx context.Context, h *hubProc, f func(ctx context.Context) result) (result, error) {
	if err := h.addEndpoint(b.recv.url + "/hook"); err != nil {
		return result{}, err
	}
	warm := makeSingles(200)
	b.recv.reset()
	post(ctx, h.ingress, warm, 16)
	if _, missing := b.wait(ctx, "warm-up", warm, 30*time.Second); missing > 0 {
		return result{}, fmt.Errorf("warm-up: %d of %d events not delivered; hub log:\n%s", missing, len(warm.ids), h.Log(8000))
	}
	b.recv.reset()
	cpu0 := h.CPU()
	r := f(ctx)
	// With -runs the CPU covers every run; each run posts as many events as the first.
	if delivered := (r.events - r.missing) * max(1, len(r.runs)); delivered > 0 {
		r.cpuPer1k = (h.CPU() - cpu0) * 1000 / time.Duration(delivered)
	}
	r.rssMiB = h.PeakRSS()
	return r, nil
}

// requests is a scenario's pre-encoded requests and the events they carry.
type requests struct {
	contentType string
	bodies      [][]byte
	ids         [][]string // per request
	sent        []int64    // per request: unix nanos of the post (or its scheduled time)
	all         []string
}

func makeRequests(n, per int) requests {
	rq := requests{contentType: cloudevent.ContentTypeBatch}
	if per == 1 {
		rq.contentType = cloudevent.ContentTypeStructured
	}
	for i := 0; i < n; i += per {
		var buf bytes.Buffer
		var ids []string
		if per > 1 {
			buf.WriteByte('[')
		}
		for j := i; j < min(n, i+per); j++ {
			ev := newEvent()
			body, err := ev.MarshalJSON()
			if err != nil {
				panic(err)
			}
			if j > i {
				buf.WriteByte(',')
			}
			buf.Write(body)
			ids = append(ids, ev.ID)
			rq.all = append(rq.all, ev.ID)
		}
		if per > 1 {
			buf.WriteByte(']')
		}
		rq.bodies = append(rq.bodies, buf.Bytes())
		rq.ids = append(rq.ids, ids)
	}
	rq.sent = make([]int64, len(rq.bodies))
	return rq
}

func makeSingles(n int) requests { return makeRequests(n, 1) }

var client = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}, Timeout: time.Minute}

// postOne sends request i and reports whether it was answered 202.
func postOne(url string, rq *requests, i int) bool {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(rq.bodies[i]))
	req.Header.Set("Content-Type", rq.contentType)
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusAccepted
}

// post sends every request from posters goroutines, as fast as they are answered, and
// returns the events accepted and the time it took.
func post(ctx context.Context, url string, rq requests, posters int) (accepted, failed int, took time.Duration) {
	var next, acc, fail atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range posters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(rq.bodies) {
					return
				}
				rq.sent[i] = time.Now().UnixNano()
				if postOne(url, &rq, i) {
					acc.Add(int64(len(rq.ids[i])))
				} else {
					fail.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return int(acc.Load()), int(fail.Load()), time.Since(start)
}

// wait waits until every event of rq arrived or timeout passed, printing progress, and
// returns the last arrival time and how many are missing.
func (b *bench) wait(ctx context.Context, what string, rq requests, timeout time.Duration) (time.Time, int) {
	deadline := time.Now().Add(timeout)
	tick := time.Now()
	for b.recv.count() < len(rq.all) && time.Now().Before(deadline) && ctx.Err() == nil {
		if time.Since(tick) >= 2*time.Second {
			progress("  %s: received %d of %d", what, b.recv.count(), len(rq.all))
			tick = time.Now()
		}
		time.Sleep(5 * time.Millisecond)
	}
	arrived, _ := b.recv.snapshot()
	var last time.Time
	missing := 0
	for _, id := range rq.all {
		at, ok := arrived[id]
		if !ok {
			missing++
			continue
		}
		if at.After(last) {
			last = at
		}
	}
	return last, missing
}

// batched posts b.o.events in requests of b.o.batch, b.o.runs times on the same hub
// and database: the first run's figures are reported, with every run's delivered/s
// (a ledger that slows as it grows shows as a falling series).
func (b *bench) batched(ctx context.Context, h *hubProc) result {
	var first result
	for run := range b.o.runs {
		what := "batched"
		if b.o.runs > 1 {
			what = fmt.Sprintf("batched run %d/%d", run+1, b.o.runs)
		}
		r := b.throughput(ctx, h, what, makeRequests(b.o.events, b.o.batch))
		if run == 0 {
			first = r
		}
		first.runs = append(first.runs, r.deliveredPS)
		if b.o.runs > 1 {
			progress("  %s: delivered %.0f/s", what, r.deliveredPS)
		}
	}
	return first
}

// throughput posts rq with the configured posters and waits for its deliveries.
func (b *bench) throughput(ctx context.Context, h *hubProc, what string, rq requests) result {
	b.recv.reset()
	start := time.Now()
	stopProgress := b.progressWhile(what, len(rq.all))
	acc, failed, took := post(ctx, h.ingress, rq, b.o.posters)
	stopProgress()
	last, missing := b.wait(ctx, what, rq, b.o.timeout)
	r := result{events: len(rq.all), failed: failed, acceptedPS: float64(acc) / took.Seconds(), missing: missing}
	if !last.IsZero() {
		r.deliveredPS = float64(len(rq.all)-missing) / last.Sub(start).Seconds()
	}
	r.p50, r.p99 = b.latencies(rq)
	_, r.dups = b.recv.snapshot()
	return r
}

// progressWhile prints the receiver's count every 2 s until the returned func is called.
func (b *bench) progressWhile(what string, want int) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				progress("  %s: posting; received %d of %d", what, b.recv.count(), want)
			}
		}
	}()
	return func() { close(done) }
}

// latencies returns p50 and p99 of post (or scheduled post) to arrival.
func (b *bench) latencies(rq requests) (time.Duration, time.Duration) {
	arrived, _ := b.recv.snapshot()
	var lat []time.Duration
	for i, ids := range rq.ids {
		sent := time.Unix(0, rq.sent[i])
		for _, id := range ids {
			if at, ok := arrived[id]; ok {
				lat = append(lat, at.Sub(sent))
			}
		}
	}
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
}

func (b *bench) single(ctx context.Context, h *hubProc) result {
	return b.throughput(ctx, h, "single", makeSingles(b.o.events))
}

// latency offers single-event posts at b.o.rate events/s for b.o.latencyFor. Each
// request's time is its scheduled one; enough posters are kept that a slow answer does
// not delay the next send (up to 256 in flight).
func (b *bench) latency(ctx context.Context, h *hubProc) result {
	n := int(float64(b.o.rate) * b.o.latencyFor.Seconds())
	rq := makeSingles(n)
	b.recv.reset()
	stopProgress := b.progressWhile("latency", n)
	jobs := make(chan int, n)
	var acc, fail atomic.Int64
	var wg sync.WaitGroup
	for range 256 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if postOne(h.ingress, &rq, i) {
					acc.Add(1)
				} else {
					fail.Add(1)
				}
			}
		}()
	}
	start := time.Now()
	interval := time.Second / time.Duration(b.o.rate)
	for i := range n {
		at := start.Add(time.Duration(i) * interval)
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		rq.sent[i] = at.UnixNano()
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	took := time.Since(start)
	stopProgress()
	last, missing := b.wait(ctx, "latency", rq, b.o.timeout)
	r := result{events: n, failed: int(fail.Load()), acceptedPS: float64(acc.Load()) / took.Seconds(), missing: missing}
	if !last.IsZero() {
		r.deliveredPS = float64(n-missing) / last.Sub(start).Seconds()
	}
	r.p50, r.p99 = b.latencies(rq)
	_, r.dups = b.recv.snapshot()
	return r
}

func (r result) summary() string {
	s := fmt.Sprintf("accepted %.0f/s, delivered %.0f/s, p50 %s, p99 %s, cpu %.2fs/1k, rss %.0f MiB",
		r.acceptedPS, r.deliveredPS, ms(r.p50), ms(r.p99), r.cpuPer1k.Seconds(), r.rssMiB)
	if r.failed > 0 || r.missing > 0 || r.dups > 0 {
		s += fmt.Sprintf(" (failed requests %d, missing %d, duplicates %d)", r.failed, r.missing, r.dups)
	}
	if len(r.runs) > 1 {
		s += fmt.Sprintf("; runs delivered/s %v", roundAll(r.runs))
	}
	return s
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

func roundAll(v []float64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x + 0.5)
	}
	return out
}
