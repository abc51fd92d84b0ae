//go:build ha

package hatest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
)

// posters is the number of concurrent HTTP clients per ingress in the benchmarks.
const posters = 8

// haWorkload is one path measured with 1, 2 and 3 replicas.
type haWorkload struct {
	name string
	// yaml returns the transports and routes sections for the run's names.
	yaml func(names benchNames) string
	// count returns how many events reached the destination so far.
	count func(ctx context.Context, b *testing.B, c *benchCluster) int64
}

type benchNames struct{ stream, kstream string }

// benchCluster is N replicas of one workload on a schema of their own.
type benchCluster struct {
	replicas []*replica
	names    benchNames
	rdb      *redis.Client
	hook     *countingHook
}

// countingHook is a webhook endpoint that counts what it receives (signatures are
// checked by TestHA_Replicas; here only throughput matters).
type countingHook struct{ n atomic.Int64 }

func (h *countingHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	h.n.Add(1)
	w.WriteHeader(http.StatusNoContent)
}

var haWorkloads = []haWorkload{
	{
		name: "OutboxRedis",
		yaml: func(n benchNames) string {
			return fmt.Sprintf(`transports:
  redis: {type: redisstream, url: %s, stream: %s, max_len: 100000000}
routes:
  - {pattern: "#", to: [redis], delivery: outbox}
`, "%[redis]s", n.stream)
		},
		count: func(ctx context.Context, b *testing.B, c *benchCluster) int64 {
			n, err := c.rdb.XLen(ctx, c.names.stream).Result()
			if err != nil {
				b.Fatal(err)
			}
			return n
		},
	},
	{
		name: "WebhookPostgres",
		yaml: func(benchNames) string {
			return `transports:
  webhooks: {type: webhook, allow: [127.0.0.1]}
routes:
  - {pattern: "#", to: [webhooks], delivery: outbox}
`
		},
		count: func(_ context.Context, _ *testing.B, c *benchCluster) int64 { return c.hook.n.Load() },
	},
	{
		name: "KDBAppendPostgres",
		yaml: func(n benchNames) string {
			return fmt.Sprintf(`transports:
  events: {type: kdbstream, stream: %s}
routes:
  - {pattern: "#", to: [events]}
`, n.kstream)
		},
		count: func(ctx context.Context, b *testing.B, c *benchCluster) int64 {
			return transportLength(b, c.replicas[0].admin, "events")
		},
	},
}

// BenchmarkHA_Replicas measures events per second through N replicas sharing one
// PostgreSQL schema, for N = 2 and 3 against N = 1 in the same run (the base_1_replica
// sub-benchmark; benchtable prints hub / base as the throughput ratio). One op is one
// event accepted by an ingress and arrived at the destination: the clock runs from the
// first POST to the last arrival. Load is spread evenly over the ingresses by posters
// concurrent clients each. Run it with `make bench-ha` (fixed -benchtime so every
// measurement starts its replicas once).
func BenchmarkHA_Replicas(b *testing.B) {
	pgURL, redisURL := testenv.PostgresURL(b), testenv.RedisURL(b)
	dir := b.TempDir()
	bin := buildHub(b, dir)
	ropts, err := redis.ParseURL(redisURL)
	if err != nil {
		b.Fatal(err)
	}
	rdb := redis.NewClient(ropts)
	b.Cleanup(func() { _ = rdb.Close() })
	// A sub-benchmark's function runs more than once (b.N = 1 first) and its Cleanup
	// after each run, so the replicas, started once per sub-benchmark, stop when their
	// pair is measured: never more than 1 + 3 hubs hold PostgreSQL connections at once.
	b.Cleanup(stopBenchClusters)
	for _, w := range haWorkloads {
		for _, n := range []int{2, 3} {
			b.Run(fmt.Sprintf("%s_%dreplicas", w.name, n), func(b *testing.B) {
				b.Run("base_1_replica", func(b *testing.B) { runHA(b, bin, dir, pgURL, redisURL, rdb, w, 1) })
				b.Run("hub", func(b *testing.B) { runHA(b, bin, dir, pgURL, redisURL, rdb, w, n) })
				stopBenchClusters()
			})
		}
	}
}

var clusters sync.Map // benchmark name -> *benchCluster: started once per sub-benchmark

// benchStop collects what BenchmarkHA_Replicas stops at its end.
var benchStop struct {
	sync.Mutex
	fns []func()
}

func stopBenchClusters() {
	clusters.Clear() // -count runs the whole benchmark again: start afresh
	benchStop.Lock()
	defer benchStop.Unlock()
	for i := len(benchStop.fns) - 1; i >= 0; i-- {
		benchStop.fns[i]()
	}
	benchStop.fns = nil
}

func atBenchEnd(fn func()) {
	benchStop.Lock()
	benchStop.fns = append(benchStop.fns, fn)
	benchStop.Unlock()
}

func runHA(b *testing.B, bin, dir, pgURL, redisURL string, rdb *redis.Client, w haWorkload, n int) {
	ctx := context.Background()
	var c *benchCluster
	if v, ok := clusters.Load(b.Name()); ok {
		c = v.(*benchCluster)
	} else {
		c = startBenchCluster(b, bin, dir, pgURL, redisURL, rdb, w, n)
		clusters.Store(b.Name(), c)
	}
	base := w.count(ctx, b, c)
	total := int64(b.N)
	var next atomic.Int64
	var failed atomic.Int64
	var firstErr atomic.Value
	b.ResetTimer()
	var wg sync.WaitGroup
	for _, r := range c.replicas {
		for range posters {
			wg.Go(func() {
				for next.Add(1) <= total {
					status, body, err := postJSON("http://"+r.ingress+"/events", erasedEvent(cloudevent.NewID()))
					if err != nil || status != http.StatusAccepted {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Sprintf("%d %v %s", status, err, body))
					}
				}
			})
		}
	}
	wg.Wait()
	want := base + total - failed.Load()
	deadline := time.Now().Add(5 * time.Minute)
	for w.count(ctx, b, c) < want {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d events arrived", w.count(ctx, b, c)-base, want-base)
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.StopTimer()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d POSTs refused, first: %v", f, firstErr.Load())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func startBenchCluster(b *testing.B, bin, dir, pgURL, redisURL string, rdb *redis.Client, w haWorkload, n int) *benchCluster {
	id := strings.ToLower(cloudevent.NewID()[len("evt_"):])
	schema := "habench_" + id
	c := &benchCluster{names: benchNames{stream: "habench:" + id, kstream: "habench-" + id}, rdb: rdb, hook: &countingHook{}}
	hook := httptest.NewServer(c.hook)
	atBenchEnd(func() {
		hook.Close()
		rdb.Del(context.Background(), c.names.stream)
		if conn, err := pgx.Connect(context.Background(), pgURL); err == nil {
			_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = conn.Close(context.Background())
		}
	})
	sections := strings.ReplaceAll(w.yaml(c.names), "%[redis]s", redisURL)
	for i := range n {
		r := &replica{tb: b, name: fmt.Sprintf("%s-%d", w.name, i), bin: bin, dir: dir, ingress: freeAddr(b), admin: freeAddr(b)}
		r.config = func(string) string {
			return fmt.Sprintf(`
instance_id: bench-%d
log: {level: warn}
store:
  postgres: %s
  schema: %s
  ledger: {max_conns: 6}   # the shared test server has max_connections 100
sources:
  ingress: {type: http, listen: "%s"}
%sadmin: {listen: "%s"}
`, i, pgURL, schema, r.ingress, sections, r.admin)
		}
		atBenchEnd(r.stopAtCleanup)
		if err := r.launch(); err != nil {
			b.Fatal(err)
		}
		c.replicas = append(c.replicas, r)
	}
	if w.name == "WebhookPostgres" {
		registerEndpoint(b, c.replicas[0].admin, hook.URL+"/hook")
	}
	return c
}

// transportLength is the stream length the admin API reports for a transport.
func transportLength(b *testing.B, admin, name string) int64 {
	resp, err := http.Get("http://" + admin + "/transports")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var ts []struct {
		Name   string
		Status struct{ Length int64 }
	}
	if err := json.NewDecoder(resp.Body).Decode(&ts); err != nil {
		b.Fatal(err)
	}
	for _, t := range ts {
		if t.Name == name {
			return t.Status.Length
		}
	}
	return 0
}
