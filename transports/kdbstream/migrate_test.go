package kdbstream

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	streamloop "github.com/koder/eventhub/internal/streams"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	"github.com/koder/eventhub/transports/redisstream"
)

func newRedis(t testing.TB) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// migBundle is Redis state worth migrating: acked, pending (two owners, several
// delivery counts), never-delivered and dead-lettered entries.
type migBundle struct {
	rdb     *redis.Client
	stream  string
	group   string
	ids     map[string]string // entry id -> event id
	acked   map[string]bool   // event ids acked in Redis
	dlq     map[string]bool   // event ids dead-lettered in Redis
	pending map[string]int64  // entry id -> delivery count
}

func setupMigration(t *testing.T, n int) *migBundle {
	ctx := testenv.Context(t, time.Minute)
	rdb := newRedis(t)
	b := &migBundle{rdb: rdb, stream: "mig." + testenv.Name(t), group: "mig-" + "test",
		ids: map[string]string{}, acked: map[string]bool{}, dlq: map[string]bool{}, pending: map[string]int64{}}
	t.Cleanup(func() { rdb.Del(context.Background(), b.stream, b.stream+streams.DLQSuffix) })
	pub, err := redisstream.New(rdb, redisstream.Config{Stream: b.stream})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if err := rdb.XGroupCreateMkStream(ctx, b.stream, b.group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	evs := make([]*cloudevent.Event, n)
	for i := range evs {
		evs[i] = streamtest.NewEvent(t, "user.updated", fmt.Sprintf("u%d", i))
	}
	if err := pub.Send(ctx, evs); err != nil {
		t.Fatal(err)
	}
	back := redisstream.NewBackend(rdb)
	read := func(consumer string, count int) []streamloop.Entry {
		es, err := back.ReadGroup(ctx, b.stream, b.group, consumer, ">", count, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			b.ids[e.ID] = e.Values["event_id"]
			b.pending[e.ID] = 1
		}
		return es
	}
	c1 := read("c1", n/3)
	c2 := read("c2", n/3)
	// c1 acks half of its entries and dead-letters two.
	for i, e := range c1 {
		switch {
		case i%2 == 0:
			if err := back.Ack(ctx, b.stream, b.group, e.ID); err != nil {
				t.Fatal(err)
			}
			b.acked[b.ids[e.ID]] = true
			delete(b.pending, e.ID)
		case i == 1 || i == 3:
			f := streams.DeadLetterFields(e.Values, "boom", 4, b.stream, b.group, e.ID, "max_deliveries")
			if err := back.DeadLetter(ctx, b.stream, b.group, e.ID, b.stream+streams.DLQSuffix, f); err != nil {
				t.Fatal(err)
			}
			b.dlq[b.ids[e.ID]] = true
			delete(b.pending, e.ID)
		}
	}
	// c2's first entries were delivered again (a history re-read bumps the count).
	if _, err := back.ReadGroup(ctx, b.stream, b.group, "c2", "0", 3, 0); err != nil {
		t.Fatal(err)
	}
	for _, e := range c2[:3] {
		b.pending[e.ID] = 2
	}
	return b
}

// TestR9_MigrationFromRedis migrates real Redis state, then consumes on kdbstream:
// every entry un-acked in Redis is handled, no acked or dead-lettered one is, pending
// owners and delivery counts carry over, and the DLQ stream comes along.
func TestR9_MigrationFromRedis(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			const n = 30
			b := setupMigration(t, n)
			eng := openEngine(t, db)
			ctx := testenv.Context(t, time.Minute)

			var calls int
			var last Progress
			rep, err := Migrate(ctx, b.rdb, eng, MigrateOptions{Streams: []string{b.stream}, BatchSize: 7,
				Progress: func(p Progress) { calls++; last = p }})
			if err != nil {
				t.Fatalf("Migrate: %v (report %+v)", err, rep)
			}
			if len(rep.Streams) != 2 || rep.Streams[1].Stream != b.stream+streams.DLQSuffix || calls == 0 {
				t.Fatalf("report %+v, progress calls %d: want the stream and its DLQ", rep, calls)
			}
			if last.Stream != b.stream+streams.DLQSuffix || last.Done != last.Total || last.Total == 0 {
				t.Fatalf("last progress %+v: want the DLQ stream, done = total", last)
			}

			// Pending entries keep owner and delivery count.
			ps, err := eng.XPending(ctx, b.stream, b.group, engine.PendingQuery{Start: "-", End: "+", Count: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != len(b.pending) {
				t.Fatalf("%d pending after migration, want %d", len(ps), len(b.pending))
			}
			for _, p := range ps {
				if want := b.pending[p.ID.String()]; p.Deliveries != want {
					t.Fatalf("pending %s: %d deliveries, want %d", p.ID, p.Deliveries, want)
				}
			}
			// The DLQ stream is there with its fields.
			dl, err := eng.XRange(ctx, b.stream+streams.DLQSuffix, "-", "+", 0)
			if err != nil || len(dl) != len(b.dlq) {
				t.Fatalf("DLQ on kdbstream: %d entries (%v), want %d", len(dl), err, len(b.dlq))
			}

			// Consumers continue on kdbstream under their own names.
			var mu sync.Mutex
			got := map[string]int{}
			want := n - len(b.acked) - len(b.dlq)
			done := make(chan struct{}, n*2)
			for _, name := range []string{"c1", "c2"} {
				c, err := NewConsumer(eng, streams.ConsumerConfig{Stream: b.stream, Group: b.group, Consumer: name,
					Block: time.Second, ClaimMinIdle: time.Hour, ClaimInterval: time.Hour, Logger: testenv.Logger(t)})
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Start(ctx, func(_ context.Context, ev *cloudevent.Event) error {
					mu.Lock()
					got[ev.ID]++
					mu.Unlock()
					done <- struct{}{}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close() })
			}
			for i := 0; i < want; i++ {
				select {
				case <-done:
				case <-ctx.Done():
					mu.Lock()
					t.Fatalf("handled %d of %d un-acked entries", len(got), want)
				}
			}
			testenv.WaitFor(t, 10*time.Second, "pending list to drain", func() bool {
				s, err := eng.XPendingSummary(ctx, b.stream, b.group)
				return err == nil && s.Count == 0
			})
			mu.Lock()
			defer mu.Unlock()
			for id, k := range got {
				if b.acked[id] || b.dlq[id] || k != 1 {
					t.Fatalf("event %s handled %d times (acked in Redis: %v, dead-lettered: %v)", id, k, b.acked[id], b.dlq[id])
				}
			}
			if len(got) != want {
				t.Fatalf("handled %d distinct events, want %d (published %d, acked %d, dead-lettered %d)", len(got), want, n, len(b.acked), len(b.dlq))
			}
		})
	}
}

// TestR9_MigrationResumes interrupts a migration after a few pages, runs it again and
// checks that it resumed from the checkpoint and the result matches the source; and
// that a dry run writes nothing.
func TestR9_MigrationResumes(t *testing.T) {
	t.Parallel()
	b := setupMigration(t, 120)
	eng := openEngine(t, "sqlite")
	ctx := testenv.Context(t, time.Minute)

	dry, err := Migrate(ctx, b.rdb, eng, MigrateOptions{Streams: []string{b.stream}, DryRun: true})
	if err != nil || dry.Streams[0].Copied != 120 {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	if n, _ := eng.XLen(ctx, b.stream); n != 0 {
		t.Fatalf("dry run wrote %d entries", n)
	}

	cctx, cancel := context.WithCancel(ctx)
	_, err = Migrate(cctx, b.rdb, eng, MigrateOptions{Streams: []string{b.stream}, BatchSize: 20,
		Progress: func(p Progress) {
			if p.Done >= 40 {
				cancel()
			}
		}})
	if err == nil {
		t.Fatal("interrupted migration reported success")
	}
	n, _ := eng.XLen(ctx, b.stream)
	if n == 0 || n >= 120 {
		t.Fatalf("after the interruption %d entries copied; want a part", n)
	}
	rep, err := Migrate(ctx, b.rdb, eng, MigrateOptions{Streams: []string{b.stream}, BatchSize: 20})
	if err != nil {
		t.Fatalf("resumed migration: %v (%+v)", err, rep)
	}
	s := rep.Streams[0]
	if s.ResumedAfter == "" || s.Copied != 120-n || s.TargetLength != 120 {
		t.Fatalf("resumed run %+v; want resumed after the checkpoint, %d copied", s, 120-n)
	}
	src, err := xrange(ctx, b.rdb, b.stream, "-", 1000)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := eng.XRange(ctx, b.stream, "-", "+", 0)
	if err != nil || len(dst) != len(src) {
		t.Fatalf("target has %d entries (%v), source %d", len(dst), err, len(src))
	}
	for i := range src {
		if src[i].ID != dst[i].ID || fmt.Sprint(src[i].Fields) != fmt.Sprint(dst[i].Fields) {
			t.Fatalf("entry %d differs: %v vs %v", i, src[i], dst[i])
		}
	}
}
