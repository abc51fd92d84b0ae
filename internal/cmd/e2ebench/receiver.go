package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/transports/webhook"
)

// receiver is the webhook endpoint: it records the first arrival of each event id and
// nothing else (no signature check, no parsing), so it is never the bottleneck.
type receiver struct {
	srv *http.Server
	url string

	mu      sync.Mutex
	arrived map[string]time.Time
	dups    int
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + ln.Addr().String(), arrived: map[string]time.Time{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	id, now := req.Header.Get(webhook.IDHeader), time.Now()
	r.mu.Lock()
	if _, dup := r.arrived[id]; dup {
		r.dups++
	} else {
		r.arrived[id] = now
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// reset forgets every arrival (a new scenario).
func (r *receiver) reset() {
	r.mu.Lock()
	r.arrived, r.dups = make(map[string]time.Time, len(r.arrived)), 0
	r.mu.Unlock()
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.arrived)
}

// snapshot returns a copy of the arrivals and the duplicates seen.
func (r *receiver) snapshot() (map[string]time.Time, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[string]time.Time, len(r.arrived))
	for k, v := range r.arrived {
		m[k] = v
	}
	return m, r.dups
}

func (r *receiver) close() { _ = r.srv.Close() }

// rawLoop is the baseline of the webhook component benchmarks (BenchmarkDeliver*'s
// base_net_http), run against the same receiver: one loop that encodes each event,
// signs it and POSTs it, waiting for each answer. Events per second.
func rawLoop(recv *receiver, n int) float64 {
	recv.reset()
	client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16}}
	defer client.CloseIdleConnections()
	secret := []byte(webhook.NewSecret())
	evs := make([]*cloudevent.Event, n)
	for i := range evs {
		evs[i] = newEvent()
	}
	start := time.Now()
	for _, ev := range evs {
		t0 := time.Now()
		body, err := ev.MarshalJSON()
		if err != nil {
			panic(err)
		}
		req, _ := http.NewRequest(http.MethodPost, recv.url+"/raw", bytes.NewReader(body))
		req.Header.Set("Content-Type", cloudevent.ContentTypeStructured)
		req.Header.Set(webhook.IDHeader, ev.ID)
		req.Header.Set(webhook.SignatureHeader, webhook.Sign(t0, body, secret))
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return float64(n) / time.Since(start).Seconds()
}

// payload pads events to ~200 bytes of structured JSON.
var payload = []byte(`{"user_id":"u_0123456789","email":"someone@example.com","plan":"pro"}`)

func newEvent() *cloudevent.Event {
	ev := cloudevent.New("/bench", "bench.user.created")
	ev.Subject = "u_0123456789"
	ev.SetExtension(cloudevent.ExtTenantID, "acme")
	ev.DataContentType = "application/json"
	ev.Data = payload
	return ev
}
