package ingress

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/schema"
	"github.com/koder/eventhub/transports/redisstream"
)

// BenchmarkIngressToRedis measures events per second from an HTTP POST to the ingress
// to an entry in a Redis stream (direct delivery), against the library publishing the
// same events to the same transport in the same process (base_library). One op is one
// event; the clock stops once every event is in the stream. p50/p99 are the ingress's
// request latencies (202 received).
func BenchmarkIngressToRedis(b *testing.B) {
	redisURL := testenv.RedisURL(b)
	setup := func(b *testing.B) (*hub.Hub, *redis.Client, string) {
		opts, _ := redis.ParseURL(redisURL)
		client := redis.NewClient(opts)
		stream := "bench:" + testenv.Name(b)
		b.Cleanup(func() { client.Del(context.Background(), stream); client.Close() })
		tr, err := redisstream.New(client, redisstream.Config{Stream: stream, MaxLen: -1})
		if err != nil {
			b.Fatal(err)
		}
		h, err := hub.New(hub.WithRegistry(schema.Builtin()), hub.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { h.Close(); tr.Close() })
		if err := h.Forward("#", tr); err != nil {
			b.Fatal(err)
		}
		return h, client, stream
	}
	waitLen := waitStreamLen
	body := func() []byte {
		return []byte(`{"specversion":"1.0","id":"` + cloudevent.NewID() + `","source":"/bench","type":"identity.user.erased","subject":"u1","tenantid":"acme","data":{"erasure_id":"e1","user_id":"u1"}}`)
	}

	b.Run("hub", func(b *testing.B) {
		h, rdb, stream := setup(b)
		srv := httptest.NewServer(&Handler{Publisher: h, Validator: schema.Builtin()})
		b.Cleanup(srv.Close)
		// Keep-alive connections for every client goroutine (the default keeps 2 idle
		// per host, so 8 clients would measure TCP handshakes, not the ingress).
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		b.Cleanup(client.CloseIdleConnections)
		var mu sync.Mutex
		var lat []time.Duration
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			var mine []time.Duration
			for pb.Next() {
				start := time.Now()
				resp, err := client.Post(srv.URL, ContentTypeStructured, bytes.NewReader(body()))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
		waitLen(b, rdb, stream, b.N)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		if len(lat) > 0 {
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		}
	})

	b.Run("base_library", func(b *testing.B) {
		h, client, stream := setup(b)
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ev, err := cloudevent.ParseJSON(body())
				if err == nil {
					err = h.Publish(context.Background(), ev)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
		waitLen(b, client, stream, b.N)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// waitStreamLen waits until stream holds n entries; a benchmark whose requests failed
// (b.Failed) or whose entries do not all arrive within 30 s fails instead of waiting
// for ever.
func waitStreamLen(b *testing.B, c *redis.Client, stream string, n int) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !b.Failed() {
		l, err := c.XLen(context.Background(), stream).Result()
		if err != nil {
			b.Fatal(err)
		}
		if l >= int64(n) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("stream %s holds %d of %d entries after 30 s", stream, l, n)
		}
		time.Sleep(time.Millisecond)
	}
}
