package ingress

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/schema"
	"github.com/koder/eventhub/transports/redisstream"
)

// BenchmarkIngressAPIKey measures what checking an API key costs per event: the
// ingress behind its access layer (the request guard, the key verified through the key
// store's cache, the event's tenant and type checked against the key) against the same
// ingress without it (base_noauth), both posting to a Redis stream as
// BenchmarkIngressToRedis does. One op is one event; the key's row is read once, then
// served from the cache (the steady state of a publisher).
func BenchmarkIngressAPIKey(b *testing.B) {
	redisURL := testenv.RedisURL(b)
	body := func() []byte {
		return []byte(`{"specversion":"1.0","id":"` + cloudevent.NewID() + `","source":"/bench","type":"identity.user.erased","subject":"u1","tenantid":"acme","data":{"erasure_id":"e1","user_id":"u1"}}`)
	}
	run := func(b *testing.B, withAuth bool) {
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
		handler := &Handler{Publisher: h, Validator: schema.Builtin()}
		var srvHandler http.Handler = handler
		key := ""
		if withAuth {
			ctx := context.Background()
			l, err := ledger.Open(ctx, ledger.Config{DSN: "sqlite://" + filepath.Join(b.TempDir(), "hub.db"), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { l.Close() })
			keys, err := auth.NewKeyStore(ctx, l.DB(), auth.KeyStoreConfig{})
			if err != nil {
				b.Fatal(err)
			}
			if _, key, err = keys.Create(ctx, auth.KeySpec{Tenant: "acme", Types: []string{"identity.#"}}); err != nil {
				b.Fatal(err)
			}
			g, err := auth.NewGuard(auth.GuardConfig{ListenAddr: "127.0.0.1:0"})
			if err != nil {
				b.Fatal(err)
			}
			acc := &Access{Guard: g, Authenticator: &auth.Authenticator{Keys: keys}}
			handler.Authorize = acc.Authorize
			srvHandler = acc.Middleware(handler)
		}
		srv := httptest.NewServer(srvHandler)
		b.Cleanup(srv.Close)
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		b.Cleanup(hc.CloseIdleConnections)
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body()))
				req.Header.Set("Content-Type", ContentTypeStructured)
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				resp, err := hc.Do(req)
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
			}
		})
		waitStreamLen(b, client, stream, b.N)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	}
	b.Run("hub", func(b *testing.B) { run(b, true) })
	b.Run("base_noauth", func(b *testing.B) { run(b, false) })
}
