package resp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
)

// TestRESP_ConfigGetAndMemoryUsage: CONFIG GET answers the parameters GUIs and scripts
// read, in Redis's shapes (a flat array in RESP2, a map in RESP3), and MEMORY USAGE sizes
// keys so that a bigger key reads bigger; the errors of both are Redis's own texts,
// compared with the machine's Redis.
func TestRESP_ConfigGetAndMemoryUsage(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, db testDB) {
		ctx := testenv.Context(t, 60*time.Second)
		_, addr := startServer(t, db.open(t), Config{})
		for _, proto := range []int{2, 3} {
			front, real := dial(t, addr, proto, nil), realRedis(t, proto)

			// CONFIG GET: the values the front stands by; patterns as in Redis.
			got, err := front.ConfigGet(ctx, "databases").Result()
			if err != nil || len(got) != 1 || got["databases"] != "1" {
				t.Fatalf("RESP%d CONFIG GET databases: %v %v", proto, got, err)
			}
			got, err = front.ConfigGet(ctx, "MAXMEMORY*").Result()
			if err != nil || got["maxmemory"] != "0" || got["maxmemory-policy"] != "noeviction" {
				t.Fatalf("RESP%d CONFIG GET MAXMEMORY*: %v %v", proto, got, err)
			}
			_, port, _ := strings.Cut(addr, ":")
			raw, err := front.Do(ctx, "CONFIG", "GET", "port", "databases").Result()
			if err != nil {
				t.Fatal(err)
			}
			if m := configMap(raw); m["port"] != port || m["databases"] != "1" || len(m) != 2 {
				t.Fatalf("RESP%d CONFIG GET port databases: %v", proto, raw)
			}
			for _, p := range []string{"requirepass", "save", "appendonly", "nosuch"} {
				if got, err := front.ConfigGet(ctx, p).Result(); err != nil || len(got) != 0 {
					t.Fatalf("RESP%d CONFIG GET %s: %v %v, want nothing", proto, p, got, err)
				}
			}
			if err := front.ConfigSet(ctx, "maxmemory", "1").Err(); err == nil || !strings.Contains(err.Error(), "not supported") {
				t.Fatalf("RESP%d CONFIG SET: %v, want a refusal", proto, err)
			}

			// MEMORY USAGE: nil for no key; a stream grows with its entries, groups and
			// pending entries; SAMPLES 0 reads every entry.
			if v, err := front.MemoryUsage(ctx, "none").Result(); err != redis.Nil {
				t.Fatalf("RESP%d MEMORY USAGE of no key: %v %v, want nil", proto, v, err)
			}
			s := fmt.Sprintf("mem%d", proto)
			front.XAdd(ctx, &redis.XAddArgs{Stream: s, Values: []string{"k", "v"}})
			small, err := front.MemoryUsage(ctx, s).Result()
			if err != nil || small <= 0 {
				t.Fatalf("RESP%d MEMORY USAGE of one entry: %d %v", proto, small, err)
			}
			for i := range 300 {
				front.XAdd(ctx, &redis.XAddArgs{Stream: s, Values: []string{"k", strings.Repeat("v", i)}})
			}
			front.XGroupCreate(ctx, s, "g", "0")
			front.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{s, ">"}, Count: 50, Block: -1})
			all, err := front.MemoryUsage(ctx, s, 0).Result()
			if err != nil || all < small+300*150 {
				t.Fatalf("RESP%d MEMORY USAGE SAMPLES 0 of 301 entries (about 45 KB of values): %d %v", proto, all, err)
			}
			if sampled, err := front.MemoryUsage(ctx, s).Result(); err != nil || sampled <= small {
				t.Fatalf("RESP%d MEMORY USAGE (SAMPLES 5) of 301 entries: %d %v", proto, sampled, err)
			}
			front.Set(ctx, s+":str", strings.Repeat("x", 1000), 0)
			if n, err := front.MemoryUsage(ctx, s+":str").Result(); err != nil || n < 1000 || n > 1100 {
				t.Fatalf("RESP%d MEMORY USAGE of a 1000-byte string: %d %v", proto, n, err)
			}

			// The error replies, word for word Redis's.
			real.Set(ctx, s+":str", "x", time.Minute)
			for _, args := range [][]any{
				{"MEMORY"}, {"MEMORY", "USAGE"}, {"MEMORY", "NOSUCH"}, {"MEMORY", "USAGE", s + ":str", "SAMPLES"},
				{"MEMORY", "USAGE", s + ":str", "SAMPLES", "x"}, {"MEMORY", "USAGE", s + ":str", "SAMPLES", "-1"},
				{"MEMORY", "USAGE", s + ":str", "OTHER", "1"},
				{"CONFIG"}, {"CONFIG", "GET"}, {"CONFIG", "NOSUCH"},
			} {
				_, ferr := front.Do(ctx, args...).Result()
				_, rerr := real.Do(ctx, args...).Result()
				if ferr == nil || rerr == nil || ferr.Error() != rerr.Error() {
					t.Fatalf("RESP%d %v: front %v, Redis %v", proto, args, ferr, rerr)
				}
			}
			real.Del(ctx, s+":str")
		}
	})
}

// configMap reads CONFIG GET's reply in either protocol's shape.
func configMap(v any) map[string]string {
	m := map[string]string{}
	switch x := v.(type) {
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			m[fmt.Sprint(x[i])] = fmt.Sprint(x[i+1])
		}
	case map[any]any:
		for k, e := range x {
			m[fmt.Sprint(k)] = fmt.Sprint(e)
		}
	}
	return m
}
