package watermill_test

import (
	"context"
	"sync"
	"testing"

	wmlib "github.com/ThreeDotsLabs/watermill"
	wamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/watermill"
)

// TestWM_AMQPConformance runs the transport suite on watermill-amqp (v3, durable
// pub/sub: a fanout exchange per topic, a durable queue per group, publisher confirms
// on) under the adapter: the Watermill transport of the design, which the hub's own
// rabbitmq package replaces for the reasons in docs/BENCHMARKS.md, still usable.
func TestWM_AMQPConformance(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T) transporttest.Harness { return newAMQPHarness(t) }, transporttest.Features{
		Ordered:        true, // one queue, one consumer, one handler at a time
		Persistent:     true, // the default group's durable queue is declared before sending
		ConsumerGroups: true, // a queue per group (GenerateQueueNameTopicNameWithSuffix)
		Redelivery:     true, // watermill-amqp requeues a nack at once; the adapter counts deliveries
		MaxBatch:       0,    // Publish takes any number (it confirms them one after the other)
		Normalize:      nil,  // lossless: metadata travels as AMQP string headers
	})
}

type amqpHarness struct {
	t     testing.TB
	url   string
	topic string
	tr    *watermill.Transport
	admin *amqp.Channel

	mu     sync.Mutex
	groups map[string]bool
}

func amqpConfig(url, group string) wamqp.Config {
	cfg := wamqp.NewDurablePubSubConfig(url, wamqp.GenerateQueueNameTopicNameWithSuffix(group))
	cfg.Publish.ConfirmDelivery = true // accepted by the broker, as hub.Transport's contract asks
	return cfg
}

func newAMQPHarness(t testing.TB) *amqpHarness {
	url := testenv.RabbitURL(t)
	h := &amqpHarness{t: t, url: url, topic: "wm_" + testenv.Name(t), groups: map[string]bool{}}
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	if h.admin, err = conn.Channel(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for g := range h.groups {
			_, _ = h.admin.QueueDelete(h.topic+"_"+g, false, false, false)
		}
		_ = h.admin.ExchangeDelete(h.topic, false, false)
		_ = h.admin.ExchangeDelete(h.topic+watermill.DeadLetterSuffix, false, false)
		_ = conn.Close()
	})
	// Declare the default group's queue now, so events sent before a consumer starts
	// are kept (a fanout exchange drops what no queue is bound for).
	sub := h.subscriber("default")
	if err := sub.SubscribeInitialize(h.topic); err != nil {
		t.Fatal(err)
	}
	_ = sub.Close()
	pub, err := wamqp.NewPublisher(amqpConfig(url, "default"), wmlib.NopLogger{})
	if err != nil {
		t.Fatal(err)
	}
	h.tr, err = watermill.NewTransport(pub, watermill.Config{Topic: h.topic, GuardPublish: true, ClosePublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.tr.Close() })
	return h
}

func (h *amqpHarness) subscriber(group string) *wamqp.Subscriber {
	h.mu.Lock()
	h.groups[group] = true
	h.mu.Unlock()
	sub, err := wamqp.NewSubscriber(amqpConfig(h.url, group), wmlib.NopLogger{})
	if err != nil {
		h.t.Fatal(err)
	}
	return sub
}

func (h *amqpHarness) Transport() hub.Transport { return h.tr }

func (h *amqpHarness) Consume(group string, handler hub.Handler) func() {
	if group == "" {
		group = "default"
	}
	dlq, err := wamqp.NewPublisher(amqpConfig(h.url, group), wmlib.NopLogger{})
	if err != nil {
		h.t.Fatal(err)
	}
	c, err := watermill.NewConsumer(h.subscriber(group), watermill.ConsumerConfig{
		Topic: h.topic, Group: group, MaxDeliveries: 10, DeadLetter: dlq, CloseSubscriber: true,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := c.Start(context.Background(), handler); err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { _ = c.Close() }) }
	h.t.Cleanup(stop)
	return stop
}

// Unreachable: watermill-amqp dials in NewPublisher, so the transport builds it lazily
// (watermill.LazyPublisher, what the hub binary does with connect_in_background).
func (h *amqpHarness) Unreachable() hub.Transport {
	pub := watermill.LazyPublisher(func() (message.Publisher, error) {
		return wamqp.NewPublisher(amqpConfig("amqp://guest:guest@127.0.0.1:1/", "default"), wmlib.NopLogger{})
	})
	tr, err := watermill.NewTransport(pub, watermill.Config{Topic: h.topic, GuardPublish: true, ClosePublisher: true})
	if err != nil {
		h.t.Fatal(err)
	}
	return tr
}
