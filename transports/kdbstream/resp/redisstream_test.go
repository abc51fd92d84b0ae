package resp

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/redisstream"
)

// The hub's own Redis transport and consumer, unchanged, pointed at the front instead
// of Redis: the seed-000 contract (T1-T5, N2 and the recovery checks), the transport
// conformance suite, and the W3 DLQ operations (which send the transport's replay
// script and DEL) pass on both databases.

// redisHarness plugs redisstream over a go-redis client of the front into the shared
// stream contract, as the Redis transport's own tests plug it into Redis.
func redisHarness(t *testing.T, c *redis.Client) streamtest.Harness {
	return streamtest.Harness{
		Backend: redisstream.NewBackend(c),
		Append: func(ctx context.Context, stream string, fields ...string) error {
			return c.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: fields}).Err()
		},
		Publisher: func(t *testing.T, stream string) hub.Transport {
			return publisherWire(t, c, stream, streams.Wire{})
		},
		PublisherWire: func(t *testing.T, stream string, w streams.Wire) hub.Transport {
			return publisherWire(t, c, stream, w)
		},
		Range: func(ctx context.Context, stream string) ([]map[string]string, error) {
			msgs, err := c.XRange(ctx, stream, "-", "+").Result()
			if err != nil {
				return nil, err
			}
			out := make([]map[string]string, len(msgs))
			for i, m := range msgs {
				out[i] = map[string]string{}
				for k, v := range m.Values {
					out[i][k], _ = v.(string)
				}
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
			return redisstream.NewIdempotencyStore(c, "test:"+testenv.Name(t)+":")
		},
		Transport:    redisstream.DefaultName,
		ClaimMinIdle: time.Second, // SQL commits under -race on a shared machine (as kdbstream's own harness)
	}
}

// publisherWire is the Redis transport writing stream in the entry format w, through the
// front.
func publisherWire(t *testing.T, c *redis.Client, stream string, w streams.Wire) hub.Transport {
	tr, err := redisstream.New(c, redisstream.Config{Stream: stream, Encoding: w.Encoding, DefaultActor: w.DefaultActor,
		DefaultSubject: w.DefaultSubject, Logger: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

func TestRESP_RedisTransportContract(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, db testDB) {
		c, _, _ := frontClient(t, db)
		streamtest.Run(t, redisHarness(t, c))
	})
}

func TestRESP_RedisTransportDLQOperations(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, db testDB) {
		c, _, _ := frontClient(t, db)
		t.Run("W3DLQOperations", func(t *testing.T) {
			streamtest.W3DLQOperations(t, redisHarness(t, c),
				func(dlq string) streams.DLQ[redisstream.DeadLetter] { return redisstream.NewDLQ(c, dlq) },
				func(dl redisstream.DeadLetter) streamtest.DeadLetterView {
					return streamtest.DeadLetterView{ID: dl.ID, Error: dl.Error, Reason: dl.Reason, SourceStream: dl.SourceStream,
						Group: dl.Group, OriginalID: dl.OriginalID, Fields: dl.Fields, Deliveries: dl.Deliveries}
				})
		})
		t.Run("W3StreamStatus", func(t *testing.T) {
			streamtest.W3StreamStatus(t, redisHarness(t, c), func(ctx context.Context, stream string) (streams.StreamStatus, error) {
				return redisstream.ReadStatus(ctx, c, stream)
			})
		})
	})
}

// confHarness is redisstream's transporttest harness, on the front.
type confHarness struct {
	t      testing.TB
	logger *slog.Logger
	client *redis.Client
	stream string
	tr     *redisstream.Transport

	mu    sync.Mutex
	group int
}

func (h *confHarness) Transport() hub.Transport { return h.tr }

func (h *confHarness) Consume(group string, handler hub.Handler) func() {
	if group == "" {
		h.mu.Lock()
		h.group++
		group = "conformance-default-" + strconv.Itoa(h.group)
		h.mu.Unlock()
	}
	c, err := redisstream.NewConsumer(h.client, streams.ConsumerConfig{
		Stream: h.stream, Group: group, Consumer: "c-" + strconv.FormatInt(time.Now().UnixNano(), 36), Start: "0",
		Block: 100 * time.Millisecond, ClaimMinIdle: time.Second, ClaimInterval: 50 * time.Millisecond,
		MaxDeliveries: 10, DrainTimeout: 5 * time.Second, Logger: h.logger,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := c.Start(context.Background(), handler); err != nil {
		h.t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { _ = c.Close() }) }
	h.t.Cleanup(stop)
	return stop
}

func (h *confHarness) Unreachable() hub.Transport {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	tr, err := redisstream.New(c, redisstream.Config{Stream: h.stream, DefaultSubject: conformanceSubject})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = tr.Close(); _ = c.Close() })
	return tr
}

// conformanceSubject is the harness transports' DefaultSubject: the suite's events
// have none, and R2 requires one (redisstream's own conformance run does the same).
const conformanceSubject = "transporttest-subject"

func TestRESP_RedisTransportConformance(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, db testDB) {
		c, _, _ := frontClient(t, db)
		transporttest.Run(t, func(t *testing.T) transporttest.Harness {
			stream := testenv.Name(t)
			tr, err := redisstream.New(c, redisstream.Config{Stream: stream, DefaultSubject: conformanceSubject, Logger: testenv.Logger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tr.Close() })
			return &confHarness{t: t, logger: testenv.Logger(t), client: c, stream: stream, tr: tr}
		}, transporttest.Features{Ordered: true, Persistent: true, ConsumerGroups: true, Redelivery: true, MaxBatch: 0, Normalize: nil})
	})
}
