package rabbitmq

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/internal/testenv"
	wm "github.com/koder/eventhub/transports/watermill"
)

// TestWM_RabbitMQUniversal runs Watermill's own universal Pub/Sub suite on the RabbitMQ
// transport offered as a Watermill Pub/Sub, against the real broker.
func TestWM_RabbitMQUniversal(t *testing.T) {
	t.Parallel()
	url := testenv.RabbitURL(t)
	tests.TestPubSub(t, tests.Features{
		ConsumerGroups:                      true,  // a durable queue per group
		ExactlyOnceDelivery:                 false, // at-least-once: a requeued delivery comes again
		GuaranteedOrder:                     true,  // one queue, one handler at a time, settled before the next
		GuaranteedOrderWithSingleSubscriber: true,  // competing consumers of one queue interleave
		Persistent:                          true,  // durable queues and persistent messages
		RestartServiceCommand:               nil,   // the broker is shared and never restarted by tests; reconnects are the fault tests'
		RequireSingleInstance:               false,
		NewSubscriberReceivesOldMessages:    false, // a queue keeps what its group has not consumed, not history
		ContextPreserved:                    false,
	}, func(t *testing.T) (message.Publisher, message.Subscriber) {
		return newWatermillPubSub(t, url, "default")
	}, func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
		return newWatermillPubSub(t, url, group)
	})
}

// newWatermillPubSub builds the pair and deletes, at the test's end, every exchange and
// queue it touched (the broker is shared).
func newWatermillPubSub(t *testing.T, url, group string) (message.Publisher, message.Subscriber) {
	cfg := Config{
		URL:          url,
		RetryDelay:   50 * time.Millisecond, // the suite nacks many times and waits for redelivery
		MaxRetries:   1000,                  // its nacks are not failures to dead-letter
		DrainTimeout: 5 * time.Second,
	}
	tr := &topicTracker{}
	t.Cleanup(func() { tr.cleanup(url, group) })
	pub, sub := NewWatermillPublisher(cfg, wm.PubSubConfig{}), NewWatermillSubscriber(cfg, group)
	// The suite closes what it builds, except in TestPublishSubscribeInOrder, whose
	// `defer require.NoError(t, sub.Close())` closes the multiplied subscriber before
	// subscribing; closing again here (Close is idempotent) keeps goleak quiet.
	t.Cleanup(func() { _ = pub.Close(); _ = sub.Close() })
	return trackedPublisher{pub, tr}, &trackedSubscriber{sub, tr}
}

type topicTracker struct {
	mu     sync.Mutex
	topics map[string]bool
}

func (tr *topicTracker) add(topic string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.topics == nil {
		tr.topics = map[string]bool{}
	}
	tr.topics[topic] = true
}

func (tr *topicTracker) cleanup(url, group string) {
	conn, err := amqp.Dial(url)
	if err != nil {
		return
	}
	defer conn.Close()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for topic := range tr.topics {
		ch, err := conn.Channel()
		if err != nil {
			return
		}
		q := topic + "." + group
		for _, name := range []string{q, q + ".retry", DLQName(q)} {
			_, _ = ch.QueueDelete(name, false, false, false)
		}
		_ = ch.ExchangeDelete(topic, true, false) // only once no other group's queue is bound
		_ = ch.Close()
	}
}

type trackedPublisher struct {
	*wm.Publisher
	tr *topicTracker
}

func (p trackedPublisher) Publish(topic string, msgs ...*message.Message) error {
	p.tr.add(topic)
	return p.Publisher.Publish(topic, msgs...)
}

type trackedSubscriber struct {
	*wm.Subscriber
	tr *topicTracker
}

func (s *trackedSubscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	s.tr.add(topic)
	return s.Subscriber.Subscribe(ctx, topic)
}

func (s *trackedSubscriber) SubscribeInitialize(topic string) error {
	s.tr.add(topic)
	return s.Subscriber.SubscribeInitialize(topic)
}
