package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// Signed deliveries per second to a local receiver: through the ledger (hub) against a
// plain loop of signed POSTs with net/http (base_net_http). One op = one event
// delivered. p50-ms/p99-ms: for hub, Send call to arrival at the receiver (the latency
// the ledger adds, queueing within the in-flight window included); for the baseline,
// one request's round trip.

func BenchmarkDeliverPostgres(b *testing.B) { benchDeliver(b, ledger.Postgres) }

func BenchmarkDeliverSQLite(b *testing.B) { benchDeliver(b, ledger.SQLite) }

// benchWindow bounds events sent but not yet received, so latency measures the
// pipeline rather than an ever-growing backlog.
const (
	benchBatch  = 100
	benchWindow = 2000
)

// benchReceiver records the arrival time of each event id once.
type benchReceiver struct {
	mu      sync.Mutex
	arrived map[string]time.Time
	want    int
	done    chan struct{}
}

func (r *benchReceiver) reset(want int) {
	r.mu.Lock()
	r.arrived, r.want, r.done = make(map[string]time.Time, want), want, make(chan struct{})
	r.mu.Unlock()
}

func (r *benchReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.arrived)
}

func (r *benchReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	id, now := req.Header.Get(IDHeader), time.Now()
	r.mu.Lock()
	if _, dup := r.arrived[id]; !dup && r.arrived != nil {
		r.arrived[id] = now
		if len(r.arrived) == r.want {
			close(r.done)
		}
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func benchDeliver(b *testing.B, backend ledger.Backend) {
	recv := &benchReceiver{}
	srv := httptest.NewServer(recv)
	b.Cleanup(srv.Close)

	// The hub's path, and the same with every attempt through River's queue
	// (Config.QueueFirstAttempt: the path before the first attempt in process), each on
	// a ledger of its own, stopped before the next runs.
	deliverLedger(b, backend, "hub", recv, srv.URL, false)
	deliverLedger(b, backend, "base_queue_first_attempt", recv, srv.URL, true)

	b.Run("base_net_http", func(b *testing.B) {
		client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16}}
		secret := []byte(NewSecret())
		evs := make([]*cloudevent.Event, b.N)
		for i := range evs {
			evs[i] = newEvent(b, "user.created")
		}
		recv.reset(b.N)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		start := time.Now()
		for _, ev := range evs {
			t0 := time.Now()
			body, err := json.Marshal(ev)
			if err != nil {
				b.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/base", bytes.NewReader(body))
			req.Header.Set("Content-Type", cloudevent.ContentTypeStructured)
			req.Header.Set(IDHeader, ev.ID)
			req.Header.Set(SignatureHeader, Sign(t0, body, secret))
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lat = append(lat, time.Since(t0))
		}
		elapsed := time.Since(start)
		b.StopTimer()
		report(b, elapsed, lat)
	})
}

// deliverLedger runs sub-benchmark name on a ledger and transport of its own (one for
// every b.N it is probed with: a fresh one per probe would leave the earlier ones
// polling beside it), stopped when it returns.
func deliverLedger(b *testing.B, backend ledger.Backend, name string, recv *benchReceiver, url string, queueFirst bool) {
	ctx := context.Background()
	// Tuned as a busy deployment would be: 1000 delivery slots (most of a slot's life
	// is waiting on the receiver and the ledger's batched completion) and a pool of 40.
	l := ledgertest.Open(b, backend, ledger.Config{FetchPollInterval: 50 * time.Millisecond, MaxConns: 40})
	cfg := Config{Allow: []string{"127.0.0.1"}, Workers: 1000, Logger: ledgertest.Logger(b), QueueFirstAttempt: queueFirst}
	tr, err := New(ctx, cfg, l)
	if err != nil {
		b.Fatal(err)
	}
	if err := l.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Stop(ctx) })
	if _, err := tr.CreateEndpoint(ctx, EndpointSpec{URL: url + "/hook", Patterns: []string{"#"}}); err != nil {
		b.Fatal(err)
	}
	// Warm up (connections, pools, River's producer) as the baseline's first request
	// warms its connection.
	warm := make([]*cloudevent.Event, 1000)
	for i := range warm {
		warm[i] = newEvent(b, "user.created")
	}
	recv.reset(len(warm))
	if err := tr.Send(ctx, warm); err != nil {
		b.Fatal(err)
	}
	select {
	case <-recv.done:
	case <-time.After(time.Minute):
		b.Fatalf("warm-up: delivered %d of %d", recv.count(), len(warm))
	}

	b.Run(name, func(b *testing.B) {
		evs := make([]*cloudevent.Event, b.N)
		for i := range evs {
			evs[i] = newEvent(b, "user.created")
		}
		sent := make(map[string]time.Time, b.N)
		recv.reset(b.N)
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i += benchBatch {
			for i-recv.count() > benchWindow {
				time.Sleep(time.Millisecond)
			}
			batch := evs[i:min(i+benchBatch, b.N)]
			now := time.Now()
			for _, ev := range batch {
				sent[ev.ID] = now
			}
			if err := tr.Send(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-recv.done:
		case <-time.After(5 * time.Minute):
			b.Fatalf("delivered %d of %d", recv.count(), b.N)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		lat := make([]time.Duration, 0, b.N)
		recv.mu.Lock()
		for id, at := range recv.arrived {
			lat = append(lat, at.Sub(sent[id]))
		}
		recv.mu.Unlock()
		report(b, elapsed, lat)
	})

	_ = l.Stop(ctx) // what runs next runs without this ledger's pollers beside it

}

func report(b *testing.B, elapsed time.Duration, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
