package redisstream

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmredis "github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// Benchmarks compare the transport with the raw go-redis commands it issues and with
// watermill-redisstream, in the same run (see docs/redisstream.md for figures). One op
// is one event. Run: go test -run '^$' -bench . -benchtime 2000x ./transports/redisstream/

// quiet drops logs, so the durability warning does not break the benchmark lines.
var quiet = slog.New(slog.DiscardHandler)

func benchEvent(b *testing.B) (*cloudevent.Event, []string) {
	ev := streamtest.NewEvent(b, "identity.user.erased", "user-u123")
	fields, err := cloudevent.EncodeFields(ev)
	if err != nil {
		b.Fatal(err)
	}
	return ev, fields
}

func benchStream(b *testing.B, c *redis.Client) string {
	s := testenv.Name(b)
	b.Cleanup(func() { c.Del(context.Background(), s) })
	return s
}

func benchTransport(b *testing.B, c *redis.Client, stream string) *Transport {
	tr, err := New(c, Config{Stream: stream})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tr.Close() })
	return tr
}

// BenchmarkPublish: one event per Send, one goroutine (goal: hub >= 0.9x raw XADD).
func BenchmarkPublish(b *testing.B) {
	ctx := context.Background()
	b.Run("hub", func(b *testing.B) {
		c := newClient(b)
		tr := benchTransport(b, c, benchStream(b, c))
		ev, _ := benchEvent(b)
		batch := []*cloudevent.Event{ev}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := tr.Send(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("base_raw_xadd", func(b *testing.B) {
		c := newClient(b)
		stream := benchStream(b, c)
		_, fields := benchEvent(b)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := c.XAdd(ctx, &redis.XAddArgs{Stream: stream, MaxLen: DefaultMaxLen, Approx: true, Values: fields}).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPublishConcurrent: one event per Send from many goroutines; coalescing
// turns them into shared pipelines where raw XADD pays one round trip each.
func BenchmarkPublishConcurrent(b *testing.B) {
	ctx := context.Background()
	b.Run("hub", func(b *testing.B) {
		c := newClient(b)
		tr := benchTransport(b, c, benchStream(b, c))
		ev, _ := benchEvent(b)
		b.SetParallelism(16)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			batch := []*cloudevent.Event{ev}
			for pb.Next() {
				if err := tr.Send(ctx, batch); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("base_raw_xadd", func(b *testing.B) {
		c := newClient(b)
		stream := benchStream(b, c)
		_, fields := benchEvent(b)
		b.SetParallelism(16)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := c.XAdd(ctx, &redis.XAddArgs{Stream: stream, MaxLen: DefaultMaxLen, Approx: true, Values: fields}).Err(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

const benchBatch = 100

// BenchmarkPublishBatch: 100-event batches, one op = one event (goal: hub >= 0.6x a raw
// pipeline of the same XADDs).
func BenchmarkPublishBatch(b *testing.B) {
	ctx := context.Background()
	b.Run("hub", func(b *testing.B) {
		c := newClient(b)
		tr := benchTransport(b, c, benchStream(b, c))
		ev, _ := benchEvent(b)
		batch := make([]*cloudevent.Event, benchBatch)
		for i := range batch {
			batch[i] = ev
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i += benchBatch {
			if err := tr.Send(ctx, batch[:min(benchBatch, b.N-i)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("base_pipelined_xadd", func(b *testing.B) {
		c := newClient(b)
		stream := benchStream(b, c)
		_, fields := benchEvent(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i += benchBatch {
			pipe := c.Pipeline()
			for range min(benchBatch, b.N-i) {
				pipe.XAdd(ctx, &redis.XAddArgs{Stream: stream, MaxLen: DefaultMaxLen, Approx: true, Values: fields})
			}
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// publishers is the number of goroutines appendBacklog publishes from. One pipelining
// goroutine is slower than the hub's consumer, which would make BenchmarkConsume
// measure the publisher.
const publishers = 4

// appendBacklog publishes n entries of fields with pipelined XADDs from several
// goroutines (the same publisher for both consumers, so only the consuming side
// differs).
func appendBacklog(b *testing.B, c *redis.Client, stream string, n int, fields func(i int) []string) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * benchBatch; i < n; i += publishers * benchBatch {
				pipe := c.Pipeline()
				for j := i; j < min(i+benchBatch, n); j++ {
					pipe.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: fields(j)})
				}
				if _, err := pipe.Exec(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkConsume: publish-to-handled-and-acked throughput of one consumer process,
// the publisher running alongside (goal: hub >= 5x watermill-redisstream's subscriber
// with its defaults). Both handlers decode the CloudEvent.
func BenchmarkConsume(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		c := newClient(b)
		stream := benchStream(b, c)
		_, fields := benchEvent(b)
		var handled atomic.Int64
		done := make(chan struct{})
		n := int64(b.N)
		cons, err := NewConsumer(c, streams.ConsumerConfig{Stream: stream, Group: "bench-consume", Consumer: "c1", Start: "0", Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		if err := cons.Start(context.Background(), func(context.Context, *cloudevent.Event) error {
			if handled.Add(1) == n {
				close(done)
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		go appendBacklog(b, c, stream, b.N, func(int) []string { return fields })
		<-done
		waitAcked(b, c, stream, "bench-consume")
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		_ = cons.Close()
	})
	b.Run("base_watermill", func(b *testing.B) {
		c := newClient(b)
		stream := benchStream(b, c)
		ev, _ := benchEvent(b)
		payload, err := json.Marshal(ev)
		if err != nil {
			b.Fatal(err)
		}
		subClient := newClient(b) // watermill's Close closes the client it is given
		sub, err := wmredis.NewSubscriber(wmredis.SubscriberConfig{Client: subClient, ConsumerGroup: "bench-watermill"}, watermill.NopLogger{})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		msgs, err := sub.Subscribe(ctx, stream)
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < b.N; i++ {
				msg := <-msgs
				if _, err := cloudevent.ParseJSON(msg.Payload); err != nil {
					b.Error(err)
				}
				msg.Ack()
			}
		}()
		b.ResetTimer()
		go appendBacklog(b, c, stream, b.N, func(i int) []string {
			return []string{wmredis.UUIDHeaderKey, strconv.Itoa(i), "payload", string(payload)}
		})
		<-done
		waitAcked(b, c, stream, "bench-watermill")
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		cancel()
		_ = sub.Close()
	})
}

// waitAcked polls the group's pending count down to zero: the last acks leave after
// the last handler returns.
func waitAcked(b *testing.B, c *redis.Client, stream, group string) {
	for {
		p, err := c.XPending(context.Background(), stream, group).Result()
		if err != nil {
			b.Fatal(err)
		}
		if p.Count == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// latencyRate is the fixed publish rate of BenchmarkLatency.
const latencyRate = 1000 // events per second

// BenchmarkLatency: publish-to-handler latency at a fixed rate (1000 events/s, one
// event per Send), p50 and p99.
func BenchmarkLatency(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		c := newClient(b)
		stream := benchStream(b, c)
		tr := benchTransport(b, c, stream)
		rec := newLatencies(b.N)
		cons, err := NewConsumer(c, streams.ConsumerConfig{Stream: stream, Group: "bench-latency", Consumer: "c1", Start: "0", Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		if err := cons.Start(context.Background(), func(_ context.Context, ev *cloudevent.Event) error {
			rec.received(ev.ID)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cons.Close() })
		evs := make([]*cloudevent.Event, b.N)
		for i := range evs {
			evs[i] = streamtest.NewEvent(b, "identity.user.erased", "u")
		}
		b.ResetTimer()
		paced(b.N, func(i int) {
			rec.sent(evs[i].ID)
			if err := tr.Send(context.Background(), evs[i:i+1]); err != nil {
				b.Error(err)
			}
		})
		rec.report(b)
	})
	b.Run("base_watermill", func(b *testing.B) {
		c := newClient(b)
		stream := benchStream(b, c)
		ev, _ := benchEvent(b)
		payload, _ := json.Marshal(ev)
		rec := newLatencies(b.N)
		sub, err := wmredis.NewSubscriber(wmredis.SubscriberConfig{Client: newClient(b), ConsumerGroup: "bench-watermill"}, watermill.NopLogger{})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		msgs, err := sub.Subscribe(ctx, stream)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for msg := range msgs {
				if _, err := cloudevent.ParseJSON(msg.Payload); err != nil {
					b.Error(err)
				}
				rec.received(msg.UUID)
				msg.Ack()
			}
		}()
		b.ResetTimer()
		paced(b.N, func(i int) {
			id := strconv.Itoa(i)
			rec.sent(id)
			if err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, MaxLen: DefaultMaxLen, Approx: true,
				Values: []string{wmredis.UUIDHeaderKey, id, "payload", string(payload)}}).Err(); err != nil {
				b.Error(err)
			}
		})
		rec.report(b)
		cancel()
		_ = sub.Close()
	})
}

// paced calls fn(i) for i in [0, n) at latencyRate.
func paced(n int, fn func(i int)) {
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * time.Second / latencyRate)); d > 0 {
			time.Sleep(d)
		}
		fn(i)
	}
}

type latencies struct {
	mu    sync.Mutex
	start map[string]time.Time
	got   []time.Duration
	all   chan struct{}
	n     int
}

func newLatencies(n int) *latencies {
	return &latencies{start: make(map[string]time.Time, n), got: make([]time.Duration, 0, n), all: make(chan struct{}), n: n}
}

func (l *latencies) sent(id string) {
	l.mu.Lock()
	l.start[id] = time.Now()
	l.mu.Unlock()
}

func (l *latencies) received(id string) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	t0, ok := l.start[id]
	if !ok {
		return
	}
	delete(l.start, id)
	l.got = append(l.got, now.Sub(t0))
	if len(l.got) == l.n {
		close(l.all)
	}
}

func (l *latencies) report(b *testing.B) {
	select {
	case <-l.all:
	case <-time.After(30 * time.Second):
		b.Fatalf("received %d of %d", len(l.got), l.n)
	}
	b.StopTimer()
	l.mu.Lock()
	defer l.mu.Unlock()
	slices.Sort(l.got)
	q := func(p float64) float64 {
		return float64(l.got[min(len(l.got)-1, int(p*float64(len(l.got))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
