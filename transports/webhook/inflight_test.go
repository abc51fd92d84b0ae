package webhook

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// blockingReceiver holds every request to /slow until release is closed (counting how
// many it holds at once) and records the event ids of /fast.
type blockingReceiver struct {
	release chan struct{}
	mu      sync.Mutex
	open    int
	maxOpen int
	slow    map[string]bool
	fast    map[string]bool
}

func (r *blockingReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var ev struct{ ID string }
	b, _ := io.ReadAll(req.Body)
	_ = json.Unmarshal(b, &ev)
	if strings.HasSuffix(req.URL.Path, "/fast") {
		r.mu.Lock()
		r.fast[ev.ID] = true
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	r.mu.Lock()
	r.open++
	r.maxOpen = max(r.maxOpen, r.open)
	r.mu.Unlock()
	<-r.release
	r.mu.Lock()
	r.open--
	r.slow[ev.ID] = true
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *blockingReceiver) counts() (maxOpen, slow, fast int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maxOpen, len(r.slow), len(r.fast)
}

// TestDC_MaxInFlight: an endpoint whose receiver holds every request gets at most its
// max_in_flight of them at once; the other workers go on delivering another endpoint's
// events (which, without the cap, would wait behind the stalled receiver); the
// deliveries that found the endpoint full are deferred with no attempt spent and all
// arrive once the receiver answers.
func TestDC_MaxInFlight(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, func(c *Config) { c.Workers = 4 })
		rc := &blockingReceiver{release: make(chan struct{}), slow: map[string]bool{}, fast: map[string]bool{}}
		srv := httptest.NewServer(rc)
		t.Cleanup(srv.Close)
		var once sync.Once
		t.Cleanup(func() { once.Do(func() { close(rc.release) }) })
		if _, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: srv.URL + "/slow", Patterns: []string{"slow.#"},
			Controls: Controls{MaxInFlight: 2}}); err != nil {
			t.Fatal(err)
		}
		if _, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: srv.URL + "/fast", Patterns: []string{"fast.#"}}); err != nil {
			t.Fatal(err)
		}
		var slow []*cloudevent.Event
		for range 10 {
			slow = append(slow, newEvent(t, "slow.thing"))
		}
		tb.send(t, slow...)
		testenv.WaitFor(t, 30*time.Second, "two requests held by the slow receiver", func() bool {
			open, _, _ := rc.counts()
			return open == 2
		})
		var fast []*cloudevent.Event
		for range 5 {
			fast = append(fast, newEvent(t, "fast.thing"))
		}
		tb.send(t, fast...)
		testenv.WaitFor(t, 30*time.Second, "the other endpoint's deliveries while the slow one holds its two", func() bool {
			_, _, n := rc.counts()
			return n == len(fast)
		})
		if open, got, _ := rc.counts(); open > 2 || got != 0 {
			t.Fatalf("the slow receiver held %d requests at once (cap 2), answered %d", open, got)
		}
		testenv.WaitFor(t, 30*time.Second, "a delivery deferred by the cap (its count in the job's metadata)", func() bool {
			var deferred int
			err := tb.l.DB().QueryRowContext(tb.ctx, `SELECT count(*) FROM river_job WHERE kind = $1
				AND CAST(metadata AS TEXT) LIKE '%inflight_deferrals%'`, deliveryKind).Scan(&deferred)
			if err != nil {
				t.Fatal(err)
			}
			return deferred > 0
		})

		once.Do(func() { close(rc.release) })
		testenv.WaitFor(t, 60*time.Second, "every slow delivery once the receiver answers", func() bool {
			_, n, _ := rc.counts()
			return n == len(slow)
		})
		if open, _, _ := rc.counts(); open > 2 {
			t.Fatalf("at most %d requests open at once, cap 2", open)
		}
		testenv.WaitFor(t, 30*time.Second, "every delivery recorded delivered, none with a failed attempt", func() bool {
			ds, err := tb.tr.Deliveries(tb.ctx, DeliveryFilter{})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if len(d.Errors) > 0 {
					t.Fatalf("delivery %d (%s) has errors %v: a deferral is not a failed attempt", d.ID, d.EventType, d.Errors)
				}
				if d.State != "delivered" {
					return false
				}
			}
			return len(ds) == len(slow)+len(fast)
		})
	})
}

// The cap is checked like the other controls.
func TestDC_MaxInFlightValidation(t *testing.T) {
	t.Parallel()
	for _, n := range []int{-1, MaxInFlight + 1} {
		c := Controls{MaxInFlight: n}
		if _, err := c.compile(); err == nil || !strings.Contains(err.Error(), "max_in_flight") {
			t.Errorf("max_in_flight %d: %v", n, err)
		}
	}
	cfg := testConfig()
	cfg.MaxInFlightPerEndpoint = -1
	cfg.setDefaults()
	if err := cfg.Validate(); err == nil {
		t.Error("a negative MaxInFlightPerEndpoint was accepted")
	}
}

// DeliveredRetention is checked against the ledger's: under a second, or longer than
// the ledger keeps completed jobs (its cleaner would win), is refused at New.
func TestDeliveredRetentionBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d  time.Duration
		ok bool
	}{{0, true}, {time.Minute, true}, {500 * time.Millisecond, false}, {2 * time.Hour, false}} {
		l := ledgertest.Open(t, ledger.SQLite, ledger.Config{})
		cfg := testConfig()
		cfg.NoWork, cfg.DeliveredRetention = true, c.d
		_, err := New(t.Context(), cfg, l)
		if (err == nil) != c.ok {
			t.Errorf("DeliveredRetention %s: %v, want ok=%v", c.d, err, c.ok)
		}
	}
}
