package resp

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/internal/testenv/redisproc"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// The front through go-redis against the same client on the machine's Redis, in one
// run (internal/cmd/benchtable prints hub vs base_redis). SQLite runs in WAL with
// synchronous=FULL: every acknowledged XADD is fsynced (Redis here: no AOF). One op is
// one entry. base_engine is the engine's Append of the same batches in process.
//
// base_redis_aof_* is a redis-server of the benchmark's own with the durability the
// front gives the same commands: XADD fsynced before its reply (appendfsync always, as
// synchronous=FULL), a consumer's XREADGROUP and XACK written but not fsynced
// (appendfsync everysec: both survive a crash of the process, not of the machine, as
// the engine's consumer bookkeeping at synchronous=NORMAL does).

const benchPipeline = 100

// benchXAdd sends b.N XADD MAXLEN ~ 100000 in pipelines of 100; with appends (the
// front's count of engine Appends) it reports how many Appends a pipeline became.
func benchXAdd(b *testing.B, c *redis.Client, stream string, appends func() int64) {
	ctx := context.Background()
	fields := []string{"type", "user.updated", "event_id", "evt_01J0000000000000000000000", "data", `{"id":"u1"}`}
	var before int64
	if appends != nil {
		before = appends()
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i += benchPipeline {
		p := c.Pipeline()
		for j := i; j < min(i+benchPipeline, b.N); j++ {
			p.XAdd(ctx, &redis.XAddArgs{Stream: stream, MaxLen: 100000, Approx: true, Values: fields})
		}
		if _, err := p.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
	if appends != nil {
		pipelines := (b.N + benchPipeline - 1) / benchPipeline
		b.ReportMetric(float64(appends()-before)/float64(pipelines), "appends/pipeline")
	}
}

func BenchmarkRESPXAddPipelinedSQLite(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		s, addr := startServer(b, openSQLite(b), Config{})
		benchXAdd(b, dial(b, addr, 3, nil), "bench", s.appends.Load)
	})
	b.Run("base_redis", func(b *testing.B) {
		c := realRedis(b, 3)
		stream := "bench:" + testenv.Name(b)
		b.Cleanup(func() { c.Del(context.Background(), stream) })
		benchXAdd(b, c, stream, nil)
	})
	b.Run("base_redis_aof_always", func(b *testing.B) {
		benchXAdd(b, ownRedis(b, "always"), "bench", nil)
	})
	// The engine's own Append of the same 100 XADDs, without the protocol and without
	// a client in the process: the front's ceiling.
	b.Run("base_engine", func(b *testing.B) {
		eng := openSQLite(b)
		ctx := context.Background()
		fields := []string{"type", "user.updated", "event_id", "evt_01J0000000000000000000000", "data", `{"id":"u1"}`}
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i += benchPipeline {
			adds := make([]engine.Add, 0, benchPipeline)
			for j := i; j < min(i+benchPipeline, b.N); j++ {
				adds = append(adds, engine.Add{Stream: "bench", Trim: &engine.Trim{Approx: true, MaxLen: 100000, Limit: -1}, Values: fields})
			}
			if _, err := eng.Append(ctx, adds); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
	})
}

// benchConsume reads b.N pre-published entries with XREADGROUP COUNT 100 and acks each
// batch with one XACK, as a consumer loop does.
func benchConsume(b *testing.B, c *redis.Client, stream string) {
	ctx := context.Background()
	b.StopTimer()
	for i := 0; i < b.N; i += 1000 {
		p := c.Pipeline()
		for j := i; j < min(i+1000, b.N); j++ {
			p.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"type", "user.updated", "n", strconv.Itoa(j)}})
		}
		if _, err := p.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.XGroupCreateMkStream(ctx, stream, "g", "0").Err(); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	start := time.Now()
	for done := 0; done < b.N; {
		res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{stream, ">"}, Count: 100, Block: -1}).Result()
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]string, 0, 100)
		for _, m := range res[0].Messages {
			ids = append(ids, m.ID)
		}
		if err := c.XAck(ctx, stream, "g", ids...).Err(); err != nil {
			b.Fatal(err)
		}
		done += len(ids)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
}

func BenchmarkRESPConsumeSQLite(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		_, addr := startServer(b, openSQLite(b), Config{})
		benchConsume(b, dial(b, addr, 3, nil), "bench")
	})
	b.Run("base_redis", func(b *testing.B) {
		c := realRedis(b, 3)
		stream := "bench:" + testenv.Name(b) + ":" + strconv.Itoa(b.N)
		b.Cleanup(func() { c.Del(context.Background(), stream) })
		benchConsume(b, c, stream)
	})
	b.Run("base_redis_aof_everysec", func(b *testing.B) {
		benchConsume(b, ownRedis(b, "everysec"), "bench")
	})
}

// ownRedis is a RESP3 client of a redis-server of the benchmark's own, with an
// append-only file fsynced as appendfsync says.
func ownRedis(b *testing.B, appendfsync string) *redis.Client {
	return redisClient(b, redisproc.Start(b, "--appendfsync", appendfsync).URL(), 3)
}

// BenchmarkRESPIdleBlockedClients parks b.N raw connections in XREAD BLOCK 0 and
// reports the front's memory per idle blocked client (heap and goroutine stacks of
// this process, the clients being bare sockets that hold no goroutine) beside Redis's
// (its INFO used_memory per blocked client). One op is one client parked.
func BenchmarkRESPIdleBlockedClients(b *testing.B) {
	// park blocks n clients (bare sockets sending XREAD BLOCK 0) and waits until the
	// server counts them all as blocked.
	park := func(b *testing.B, addr, stream string, n int, blocked func() int64) []net.Conn {
		cmd := fmt.Sprintf("*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n$%d\r\n%s\r\n$1\r\n$\r\n", len(stream), stream)
		conns := make([]net.Conn, 0, n)
		for range n {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Write([]byte(cmd)); err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
		}
		waitFor(b, func() bool { return blocked() >= int64(n) })
		return conns
	}
	// parkAll parks b.N clients in chunks of at most idleChunk (b.N grows past what a
	// process may hold open, two descriptors per client here, and past Redis's
	// maxclients), each chunk closed before the next, and returns the memory that
	// chunks added (mem after parking minus mem before), summed.
	parkAll := func(b *testing.B, addr, stream string, blocked func() int64, mem func() int64) int64 {
		var used int64
		for done := 0; done < b.N; {
			n := min(idleChunk, b.N-done)
			before := mem()
			conns := park(b, addr, stream, n, blocked)
			b.StopTimer()
			// Idle, as the clients being measured are: Redis trims an idle client's
			// query buffer after two seconds (clientsCron), and the front's
			// connections are as small as they get once parked.
			time.Sleep(idleSettle)
			used += mem() - before
			for _, c := range conns {
				c.Close()
			}
			waitFor(b, func() bool { return blocked() == 0 })
			b.StartTimer()
			done += n
		}
		return used
	}
	b.Run("hub", func(b *testing.B) {
		s, addr := startServer(b, openSQLite(b), Config{Logger: quietLogger()})
		mem := func() int64 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return int64(m.HeapInuse + m.StackInuse)
		}
		b.ResetTimer()
		used := parkAll(b, addr, "idle", s.blocked.Load, mem)
		b.StopTimer()
		b.ReportMetric(float64(used)/float64(b.N), "B/client")
	})
	b.Run("base_redis", func(b *testing.B) {
		c := realRedis(b, 2)
		mem := func() int64 {
			s, _ := c.Info(context.Background(), "memory").Result()
			return infoInt(s, "used_memory")
		}
		b.ResetTimer()
		used := parkAll(b, c.Options().Addr, "idle:"+testenv.Name(b), func() int64 {
			s, _ := c.Info(context.Background(), "clients").Result()
			return infoInt(s, "blocked_clients")
		}, mem)
		b.StopTimer()
		b.ReportMetric(float64(used)/float64(b.N), "B/client")
	})
}

// idleChunk is how many idle clients BenchmarkRESPIdleBlockedClients parks at once,
// and idleSettle how long they stay idle before their memory is read.
const (
	idleChunk  = 4000
	idleSettle = 2500 * time.Millisecond
)

// waitFor polls cond for up to a minute (connections being accepted or closed).
func waitFor(b *testing.B, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatal("timed out waiting for the server's count of blocked clients")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func infoInt(info, key string) int64 {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
