package redisstream

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	wm "github.com/koder/eventhub/transports/watermill"
)

// TestWM_RedisUniversal runs Watermill's own universal Pub/Sub suite on the Redis
// Streams transport offered as a Watermill Pub/Sub, against the real server.
func TestWM_RedisUniversal(t *testing.T) {
	t.Parallel()
	opts, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	// The suite runs its tests in parallel, one with 50 subscribers: each holds a
	// connection in a blocking read, so the pool is sized for that.
	opts.PoolSize = 256
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	tests.TestPubSub(t, tests.Features{
		ConsumerGroups:                      true,  // R4 consumer groups
		ExactlyOnceDelivery:                 false, // at-least-once: a claimed entry can come twice
		GuaranteedOrder:                     true,  // one reader per subscription, one handler at a time
		GuaranteedOrderWithSingleSubscriber: true,  // group members interleave
		Persistent:                          true,  // entries stay in the stream; a group resumes where it was
		RestartServiceCommand:               nil,   // the server is shared and never restarted by tests; outages are the fault tests'
		RequireSingleInstance:               false,
		NewSubscriberReceivesOldMessages:    false, // a group reads from where it is, not the history (R4.1)
		ContextPreserved:                    false,
	}, func(t *testing.T) (message.Publisher, message.Subscriber) {
		return newRedisWatermill(t, client, "wm-default")
	}, func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
		// The suite's groups ("cg_<uuid>") become R3 names.
		return newRedisWatermill(t, client, "wm-"+strings.ReplaceAll(strings.ToLower(group), "_", "-"))
	})
}

func newRedisWatermill(t *testing.T, client *redis.Client, group string) (message.Publisher, message.Subscriber) {
	pub := NewWatermillPublisher(client, Config{Logger: quiet}, wm.PubSubConfig{})
	sub := NewWatermillSubscriber(client, streams.ConsumerConfig{
		Group: group, Consumer: "wm",
		Block: 100 * time.Millisecond, ClaimMinIdle: 500 * time.Millisecond, ClaimInterval: 100 * time.Millisecond,
		MaxDeliveries: 1000, // the suite's nacks are not failures to dead-letter
		DrainTimeout:  5 * time.Second, Logger: quiet,
	})
	topics := &streamTracker{}
	t.Cleanup(func() { topics.delete(client) })
	// Close again at the end (idempotent): the suite's TestPublishSubscribeInOrder
	// closes its multiplied subscriber before subscribing it.
	t.Cleanup(func() { _ = pub.Close(); _ = sub.Close() })
	return trackedPub{pub, topics}, &trackedSub{sub, topics}
}

// streamTracker deletes the streams a test used (the server is shared).
type streamTracker struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (s *streamTracker) add(topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = map[string]bool{}
	}
	s.keys[topic], s.keys[streams.DLQStreamFor(topic)] = true, true
}

func (s *streamTracker) delete(client *redis.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.keys {
		client.Del(context.Background(), k)
	}
}

type trackedPub struct {
	*wm.Publisher
	tr *streamTracker
}

func (p trackedPub) Publish(topic string, msgs ...*message.Message) error {
	p.tr.add(topic)
	return p.Publisher.Publish(topic, msgs...)
}

type trackedSub struct {
	*wm.Subscriber
	tr *streamTracker
}

func (s *trackedSub) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	s.tr.add(topic)
	return s.Subscriber.Subscribe(ctx, topic)
}

func (s *trackedSub) SubscribeInitialize(topic string) error {
	s.tr.add(topic)
	return s.Subscriber.SubscribeInitialize(topic)
}
