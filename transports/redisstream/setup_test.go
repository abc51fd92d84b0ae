package redisstream

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// newClient connects to the test Redis (HUB_TEST_REDIS_URL or 127.0.0.1:6379).
func newClient(t testing.TB) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testGroup returns an R3-valid group name unique to the test.
func testGroup(t testing.TB) string {
	return "test-" + strings.ReplaceAll(testenv.Name(t), "_", "-")
}

// harness plugs the Redis backend into the shared stream contract suite.
func harness(t *testing.T) streamtest.Harness {
	return harnessOn(newClient(t))
}

// harnessOn is harness on client (one server or a cluster).
func harnessOn(c redis.UniversalClient) streamtest.Harness {
	return streamtest.Harness{
		Backend: NewBackend(c),
		Append: func(ctx context.Context, stream string, fields ...string) error {
			return c.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: fields}).Err()
		},
		Publisher: func(t *testing.T, stream string) hub.Transport {
			tr, err := New(c, Config{Stream: stream, Logger: testenv.Logger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tr.Close() })
			return tr
		},
		PublisherWire: func(t *testing.T, stream string, w streams.Wire) hub.Transport {
			tr, err := New(c, Config{Stream: stream, Encoding: w.Encoding, DefaultActor: w.DefaultActor,
				DefaultSubject: w.DefaultSubject, Logger: testenv.Logger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tr.Close() })
			return tr
		},
		Range: func(ctx context.Context, stream string) ([]map[string]string, error) {
			msgs, err := c.XRange(ctx, stream, "-", "+").Result()
			if err != nil {
				return nil, err
			}
			out := make([]map[string]string, len(msgs))
			for i, e := range toEntries(msgs, 0) {
				out[i] = e.Values
			}
			return out, nil
		},
		Pending: func(ctx context.Context, stream, group string) (int64, error) {
			p, err := c.XPending(ctx, stream, group).Result()
			if err != nil {
				return 0, err
			}
			return p.Count, nil
		},
		Idempotency: func(t *testing.T) hub.IdempotencyStore {
			return NewIdempotencyStore(c, "test:"+testenv.Name(t)+":")
		},
		Transport: DefaultName,
		DLQFor:    func(stream string) string { return DLQStreamFor(c, stream) },
		// A consumer holds a read batch until its last handler returns; under -race on a
		// shared machine that can pass 150ms, and T5 would see the other consumer claim
		// entries still being handled (at least once, but T5 counts exactly once).
		ClaimMinIdle: time.Second,
	}
}

// newNilClient returns a client aimed at a closed port, for tests that must not touch
// a server (constructors do no I/O).
func newNilClient() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
}

// newEvents returns n valid events.
func newEvents(t testing.TB, n int) []*cloudevent.Event {
	evs := make([]*cloudevent.Event, n)
	for i := range evs {
		evs[i] = streamtest.NewEvent(t, "user.created", "user-"+strconv.Itoa(i))
	}
	return evs
}
