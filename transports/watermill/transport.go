package watermill

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// DefaultName labels the transport in metrics, logs and failure events.
const DefaultName = "watermill"

// Config configures a Transport.
type Config struct {
	// Topic is the Watermill topic every event is published to. Required unless
	// TopicFor is set.
	Topic string `yaml:"topic"`
	// Mode is the content mode: "binary" (default) or "structured".
	Mode Mode `yaml:"mode"`
	// MaxBatch is the most messages handed to one Publish call; a larger batch is split.
	// 0 (default) hands the whole batch to one call.
	MaxBatch int `yaml:"max_batch"`
	// Name labels metrics, logs and failure events. Default "watermill".
	Name string `yaml:"name"`

	// TopicFor, when set, picks each event's topic (events of one batch are grouped by
	// topic, each group published in batch order). It returns an InvalidArgument error
	// for an event it cannot place.
	TopicFor func(ev *cloudevent.Event) (string, error) `yaml:"-"`
	// ErrorCode classifies Publish errors. Default DefaultErrorCode.
	ErrorCode ErrorCoder `yaml:"-"`
	// GuardPublish runs Publish on a worker goroutine, so that Send stops waiting when
	// ctx ends even if Publish does not return: for a Publisher that can block without
	// regard to its messages' context (watermill-amqp waits for a broker's flow control
	// and for its confirms without one; gochannel with BlockPublishUntilSubscriberAck
	// waits for the subscriber). It costs a goroutine hand-over per Send, about 2 µs.
	//
	// Default false: Send calls Publish on the caller's goroutine, as Watermill's router
	// does, and relies on Watermill's Publisher contract: Publish "does not work with a
	// single Context. Use the Context() method of each message instead", and Send sets
	// every message's context to its own (watermill-redisstream's go-redis calls return
	// when it ends; watermill-nats's JetStream publish also has its own timeout).
	GuardPublish bool `yaml:"-"`
	// ClosePublisher makes Close close the Publisher too: for publishers built for this
	// transport alone. Default false: the caller closes what it passed in.
	ClosePublisher bool `yaml:"-"`
	// Logger receives event_emitted (debug) and publish failures. Default: discarded.
	Logger *slog.Logger `yaml:"-"`
	// Metrics receives event_count_total (emitted, publish_error). Default: unregistered.
	Metrics *hub.StreamMetrics `yaml:"-"`
}

func (c *Config) setDefaults() {
	if c.Mode == "" {
		c.Mode = ModeBinary
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.ErrorCode == nil {
		c.ErrorCode = DefaultErrorCode
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Metrics == nil {
		c.Metrics = hub.NewStreamMetrics(nil)
	}
}

// Validate reports every invalid field by its YAML name.
func (c *Config) Validate() error {
	var p problems
	if c.Topic == "" && c.TopicFor == nil {
		p.add("topic", "required")
	}
	if c.Mode != ModeBinary && c.Mode != ModeStructured && c.Mode != "" {
		p.add("mode", "%q, want %s or %s", c.Mode, ModeBinary, ModeStructured)
	}
	if c.MaxBatch < 0 {
		p.add("max_batch", "must not be negative, got %d", c.MaxBatch)
	}
	return p.err()
}

// WithDefaults returns c with every unset field at its default, without building
// anything: what a config checker validates.
func (c Config) WithDefaults() Config {
	c.setDefaults()
	return c
}

// Transport publishes events through a Watermill message.Publisher (hub.Transport).
//
// Send encodes the batch (Encode), hands it to Publish (split by MaxBatch, grouped by
// topic) and returns once Publish returned: what "accepted" means is the publisher's
// (watermill-nats in JetStream mode waits for the stream's ack; watermill-amqp with
// confirms for the broker's). Send is safe for concurrent use when the Publisher is
// (Watermill's contract says it is). It does not retry. A failed batch may have been
// published in part (at-least-once).
type Transport struct {
	pub message.Publisher
	cfg Config

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
	workers   *workers

	emitted, publishErrors prometheus.Counter
}

// NewTransport validates cfg and wraps pub. It does no I/O.
func NewTransport(pub message.Publisher, cfg Config) (*Transport, error) {
	if pub == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "watermill: nil Publisher")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	label := cfg.Topic
	if label == "" {
		label = cfg.Name
	}
	return &Transport{
		pub: pub, cfg: cfg, workers: newWorkers(pub),
		emitted:       cfg.Metrics.EventCount.WithLabelValues(cfg.Name, label, "emitted"),
		publishErrors: cfg.Metrics.EventCount.WithLabelValues(cfg.Name, label, "publish_error"),
	}, nil
}

// Name labels the transport in metrics, logs and failure events.
func (t *Transport) Name() string { return t.cfg.Name }

// Publisher returns the wrapped Publisher.
func (t *Transport) Publisher() message.Publisher { return t.pub }

// Send publishes the batch; see Transport.
func (t *Transport) Send(ctx context.Context, batch []*cloudevent.Event) error {
	if t.closed.Load() {
		return hub.Errorf(hub.FailedPrecondition, "watermill: Send after Close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(batch) == 0 {
		return nil
	}
	var one [1]topicGroup
	groups, err := t.encode(ctx, batch, one[:0])
	if err != nil {
		return err
	}
	for _, g := range groups {
		for start := 0; start < len(g.msgs); {
			end := len(g.msgs)
			if t.cfg.MaxBatch > 0 {
				end = min(end, start+t.cfg.MaxBatch)
			}
			if err := t.publish(ctx, g.topic, g.msgs[start:end]); err != nil {
				t.publishErrors.Add(float64(end - start))
				t.cfg.Logger.WarnContext(ctx, "watermill publish failed", "topic", g.topic, "events", end-start, "error", err)
				return err
			}
			t.emitted.Add(float64(end - start))
			start = end
		}
	}
	if t.cfg.Logger.Enabled(ctx, slog.LevelDebug) {
		for _, ev := range batch {
			t.cfg.Logger.DebugContext(ctx, "event_emitted", "type", ev.Type, "event_id", ev.ID, "subject_id", ev.Subject, "transport", t.cfg.Name)
		}
	}
	return nil
}

type topicGroup struct {
	topic string
	msgs  []*message.Message
}

// encode appends to groups the batch's messages grouped by topic, in batch order
// within a topic (Send passes a one-element array, enough without TopicFor).
func (t *Transport) encode(ctx context.Context, batch []*cloudevent.Event, groups []topicGroup) ([]topicGroup, error) {
	if t.cfg.TopicFor == nil {
		msgs := make([]*message.Message, len(batch))
		for i, ev := range batch {
			m, err := Encode(ev, t.cfg.Mode)
			if err != nil {
				return nil, err
			}
			m.SetContext(ctx)
			msgs[i] = m
		}
		return append(groups, topicGroup{t.cfg.Topic, msgs}), nil
	}
	index := map[string]int{}
	for _, ev := range batch {
		topic, err := t.cfg.TopicFor(ev)
		if err != nil {
			return nil, hub.Wrap(hub.InvalidArgument, err)
		}
		m, err := Encode(ev, t.cfg.Mode)
		if err != nil {
			return nil, err
		}
		m.SetContext(ctx)
		i, ok := index[topic]
		if !ok {
			i = len(groups)
			index[topic] = i
			groups = append(groups, topicGroup{topic: topic})
		}
		groups[i].msgs = append(groups[i].msgs, m)
	}
	return groups, nil
}

// publish calls Publish and, with Config.GuardPublish and a ctx that can end, stops
// waiting when ctx ends: a Publisher has no context parameter, and a hung broker must
// not hang the hub's delivery.
func (t *Transport) publish(ctx context.Context, topic string, msgs []*message.Message) error {
	if ctx.Done() == nil || !t.cfg.GuardPublish {
		err := t.pub.Publish(topic, msgs...)
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		return classify(t.cfg.ErrorCode, err)
	}
	waited, err := t.workers.publish(ctx, publishReq{topic: topic, msgs: msgs})
	if !waited {
		return err
	}
	return classify(t.cfg.ErrorCode, err)
}

// Close marks the transport closed (Send then fails with FailedPrecondition) and closes
// the Publisher when Config.ClosePublisher is set; it does not wait for Sends in
// progress (closing the publisher is what ends one stuck on a broker). Idempotent.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() {
		t.closed.Store(true)
		t.workers.stop()
		if t.cfg.ClosePublisher {
			t.closeErr = t.pub.Close()
		}
	})
	return t.closeErr
}

var (
	_ hub.Transport = (*Transport)(nil)
	_ hub.Named     = (*Transport)(nil)
)
