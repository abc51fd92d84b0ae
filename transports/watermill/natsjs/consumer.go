package natsjs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	wm "github.com/koder/eventhub/transports/watermill"
)

// Consumer reads a JetStream stream as a member of a durable consumer (B1/E7 on NATS):
// watermill-nats's subscriber in JetStream mode (push consumer, explicit acks, the
// durable as queue group) under the Watermill adapter. An event is acked after its
// handler returned nil; a failure is nacked with RetryDelay and redelivered by the
// server; the delivery that makes MaxDeliveries (JetStream's own count) moves it to the
// dead-letter subject, as do malformed events and unknown MAJOR versions, at once.
// Unacked events are redelivered by the server after AckWait, so nothing is lost when a
// consumer dies.
type Consumer struct {
	*wm.Consumer
	nc         *nats.Conn
	connClosed <-chan struct{}
	cfg        Config
	patterns   []hub.Pattern
}

// NewConsumer validates cfg (Durable required), connects and creates the stream and the
// dead-letter stream when missing. Start subscribes.
func NewConsumer(ctx context.Context, cfg Config) (*Consumer, error) {
	cfg.setDefaults()
	if err := cfg.ValidateConsumer(); err != nil {
		return nil, err
	}
	closed := make(chan struct{})
	var once sync.Once
	nc, err := connect(ctx, &cfg, "consumer", nats.ClosedHandler(func(*nats.Conn) { once.Do(func() { close(closed) }) }))
	if err != nil {
		return nil, err
	}
	c, err := openConsumer(ctx, nc, closed, cfg)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func openConsumer(ctx context.Context, nc *nats.Conn, closed <-chan struct{}, cfg Config) (*Consumer, error) {
	c := &Consumer{nc: nc, cfg: cfg, connClosed: closed}
	for _, p := range cfg.Patterns {
		c.patterns = append(c.patterns, hub.MustCompilePattern(p)) // checked by ValidateConsumer
	}
	if nc.IsConnected() {
		if err := c.ensureStreams(ctx); err != nil {
			return nil, err
		}
	}
	sub, err := wmnats.NewSubscriberWithNatsConn(nc, wmnats.SubscriberSubscriptionConfig{
		Unmarshaler:      Marshaler{},
		SubscribersCount: 1,
		AckWaitTimeout:   cfg.AckWait,
		CloseTimeout:     cfg.DrainTimeout,
		SubscribeTimeout: cfg.ConnectTimeout,
		SubjectCalculator: func(_, topic string) *wmnats.SubjectDetail {
			return &wmnats.SubjectDetail{Primary: topic, QueueGroup: cfg.Durable}
		},
		NakDelay:         wmnats.NewStaticDelay(cfg.RetryDelay),
		QueueGroupPrefix: cfg.Durable,
		JetStream: wmnats.JetStreamConfig{
			DurablePrefix: cfg.Durable,
			SubscribeOptions: []nats.SubOpt{
				nats.BindStream(cfg.Stream),
				nats.ManualAck(),
				nats.AckExplicit(),
				nats.AckWait(cfg.AckWait),
				nats.MaxAckPending(cfg.MaxAckPending),
				nats.DeliverAll(),
			},
		},
	}, watermill.NopLogger{})
	if err != nil {
		return nil, hub.Wrap(errorCode(err), err)
	}
	dlq, err := wmnats.NewPublisherWithNatsConn(nc, wmnats.PublisherPublishConfig{
		Marshaler: Marshaler{}, SubjectCalculator: wmnats.DefaultSubjectCalculator,
	}, watermill.NopLogger{})
	if err != nil {
		return nil, hub.Wrap(errorCode(err), err)
	}
	wc, err := wm.NewConsumer(subscriber{sub}, wm.ConsumerConfig{
		Quiesce:         c.drain,
		Topic:           filterSubject(cfg.Subject, cfg.Patterns),
		Group:           cfg.Durable,
		Name:            cfg.Name,
		Concurrency:     cfg.Concurrency,
		MaxDeliveries:   cfg.MaxDeliveries,
		DeadLetterTopic: cfg.DeadLetterSubject,
		DrainTimeout:    cfg.DrainTimeout,
		DeadLetter:      dlq,
		CloseSubscriber: true, // the subscriber drains the connection, the DLQ publisher closes it
		Versions:        cfg.Versions,
		TracerProvider:  cfg.TracerProvider,
		Logger:          cfg.Logger,
		Metrics:         cfg.Metrics,
	})
	if err != nil {
		return nil, err
	}
	c.Consumer = wc
	return c, nil
}

// subscriber hides watermill-nats's SubscribeInitialize, which would create a stream
// named after the topic: this package creates its streams itself. Its Close runs after
// drain closed the connection, which watermill-nats reports as an error.
type subscriber struct{ message.Subscriber }

func (s subscriber) Close() error {
	if err := s.Subscriber.Close(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		return err
	}
	return nil
}

// drain is the consumer's Quiesce step: watermill-nats closes a subscription's output
// channel while its delivery callback may still be sending on it (a data race, and a
// possible send on a closed channel). Draining the connection first ends every callback:
// the subscriptions stop, messages already buffered are handed over (and nacked by the
// closing consumer), and the connection closes. Bounded by DrainTimeout.
func (c *Consumer) drain() {
	if err := c.nc.Drain(); err != nil {
		c.nc.Close()
		return
	}
	select {
	case <-c.connClosed:
	case <-time.After(c.cfg.DrainTimeout):
		c.nc.Close()
	}
}

// ensureStreams creates the stream and the dead-letter stream when CreateStream asks.
func (c *Consumer) ensureStreams(ctx context.Context) error {
	if !c.cfg.createStream() {
		return nil
	}
	js, err := jetstream.New(c.nc)
	if err != nil {
		return hub.Wrap(errorCode(err), err)
	}
	if err := ensureStream(ctx, js, &c.cfg, c.cfg.Stream, []string{c.cfg.Subject + ".>"}); err != nil {
		return err
	}
	dlqSubjects := []string{c.cfg.DeadLetterSubject}
	if strings.HasPrefix(c.cfg.DeadLetterSubject, c.cfg.Subject+"_dlq.") {
		dlqSubjects = []string{c.cfg.Subject + "_dlq.>"} // every durable of the stream
	}
	return ensureStream(ctx, js, &c.cfg, c.cfg.DeadLetterStream, dlqSubjects)
}

// ensureDurable creates the durable consumer when it is missing. It must exist before
// watermill-nats subscribes: nats.go deletes a consumer it created itself when the
// subscription ends (Unsubscribe, Drain), which would make the durable forget its
// position at every restart. A consumer created here is only bound to, never deleted.
// An existing one is left as it is; if its settings differ from cfg, Subscribe fails
// and says which.
func (c *Consumer) ensureDurable() error {
	js, err := c.nc.JetStream()
	if err != nil {
		return hub.Wrap(errorCode(err), err)
	}
	_, err = js.ConsumerInfo(c.cfg.Stream, c.cfg.Durable)
	if err == nil {
		return nil
	}
	if !errors.Is(err, nats.ErrConsumerNotFound) {
		return hub.Wrap(errorCode(err), fmt.Errorf("natsjs: consumer %s: %w", c.cfg.Durable, err))
	}
	_, err = js.AddConsumer(c.cfg.Stream, &nats.ConsumerConfig{
		Durable:        c.cfg.Durable,
		DeliverSubject: nats.NewInbox(),
		DeliverGroup:   c.cfg.Durable,
		DeliverPolicy:  nats.DeliverAllPolicy,
		AckPolicy:      nats.AckExplicitPolicy,
		AckWait:        c.cfg.AckWait,
		MaxAckPending:  c.cfg.MaxAckPending,
		MaxDeliver:     -1, // the consumer dead-letters; the server must not drop first
		FilterSubject:  filterSubject(c.cfg.Subject, c.cfg.Patterns),
	})
	if err != nil && !errors.Is(err, nats.ErrConsumerNameAlreadyInUse) {
		return hub.Wrap(errorCode(err), fmt.Errorf("natsjs: create consumer %s: %w", c.cfg.Durable, err))
	}
	return nil
}

// Start creates the streams if NewConsumer could not reach the server, then subscribes
// (see watermill.Consumer.Start). Events no pattern matches are acked unhandled.
func (c *Consumer) Start(ctx context.Context, h hub.Handler) error {
	if h == nil {
		return hub.Errorf(hub.InvalidArgument, "natsjs: nil Handler")
	}
	if err := c.ensureStreams(ctx); err != nil {
		return err
	}
	if err := c.ensureDurable(); err != nil {
		return err
	}
	return c.Consumer.Start(ctx, func(ctx context.Context, ev *cloudevent.Event) error {
		if !c.wanted(ev.Type) {
			return nil
		}
		return h(ctx, ev)
	})
}

func (c *Consumer) wanted(typ string) bool {
	for _, p := range c.patterns {
		if p.Match(typ) {
			return true
		}
	}
	return false
}

// Health reports whether the connection is up.
func (c *Consumer) Health(context.Context) error {
	if !c.nc.IsConnected() {
		return hub.Errorf(hub.Unavailable, "natsjs: %s", c.nc.Status())
	}
	return nil
}

// filterSubject maps the patterns onto the consumer's subject filter: one pattern
// without '#' (and not the bare catch-all "*", which excludes hub.*) translates word
// for word ('*' is one token in both); anything else reads the whole stream and the
// patterns are applied in process.
func filterSubject(prefix string, patterns []string) string {
	if len(patterns) == 1 && patterns[0] != "*" && !strings.Contains(patterns[0], "#") {
		return prefix + "." + patterns[0]
	}
	return prefix + ".>"
}

var (
	_ hub.Consumer      = (*Consumer)(nil)
	_ hub.HealthChecker = (*Consumer)(nil)
)
