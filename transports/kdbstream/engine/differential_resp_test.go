package engine_test

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	"github.com/koder/eventhub/transports/kdbstream/resp"
)

// TestRESP_DifferentialAgainstRedis is the differential test's Redis protocol mode:
// the same seeded sequences, sent through go-redis (a client nobody here wrote) to the
// machine's Redis and to the RESP front over the engine on each database, in RESP2 and
// in RESP3 (maps, nulls and XREAD's stream map have other shapes there), comparing
// every reply as go-redis decodes it.
func TestRESP_DifferentialAgainstRedis(t *testing.T) {
	t.Parallel()
	engine.ForEachDialect(t, func(t *testing.T, eng *engine.Engine) {
		s, err := resp.New(eng, resp.Config{Logger: testenv.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(ln)
		t.Cleanup(func() { s.Close() })
		for _, proto := range []int{2, 3} {
			opt, err := redis.ParseURL(testenv.RedisURL(t))
			if err != nil {
				t.Fatal(err)
			}
			opt.Protocol = proto
			real := redis.NewClient(opt)
			front := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), Protocol: proto})
			t.Cleanup(func() { real.Close(); front.Close() })
			for _, seed := range engine.DifferentialSeeds {
				t.Run(fmt.Sprintf("RESP%d/seed%d", proto, seed), func(t *testing.T) {
					engine.RunDifferential(t,
						func(ctx context.Context, cmd []string) (any, error) { return engine.RedisDo(ctx, real, cmd) },
						func(ctx context.Context, cmd []string) (any, error) { return engine.RedisDo(ctx, front, cmd) },
						func(keys ...string) { real.Del(context.Background(), keys...) }, seed, 400)
				})
			}
		}
	})
}
