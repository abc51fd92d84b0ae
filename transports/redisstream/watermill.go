package redisstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	wm "github.com/koder/eventhub/transports/watermill"
)

// The Redis Streams transport as a Watermill Pub/Sub: a Watermill topic is a stream,
// written in the R2 field envelope (seed 000's consumers read it as they are), and a
// Watermill consumer group is an R4 consumer group, with batched reads, claims and the
// dead-letter stream "<topic>:dlq".

// NewWatermillPublisher returns a message.Publisher: Publish(topic, ...) appends
// through a Transport built from cfg with Stream = topic (one per topic, sharing
// client). Messages without CloudEvents metadata become events as mapping says
// (watermill.MessageToEvent); one without a subject is written with cfg.DefaultSubject,
// streams.UnspecifiedSubject when that is empty (R2's subject_id is mandatory). Close leaves client open.
func NewWatermillPublisher(client redis.UniversalClient, cfg Config, mapping wm.PubSubConfig) *wm.Publisher {
	return wm.NewPublisher(func(topic string) (hub.Transport, error) {
		c := cfg
		c.Stream, c.Service, c.Naming, c.Namer = topic, "", "", nil
		if c.DefaultSubject == "" {
			c.DefaultSubject = streams.UnspecifiedSubject // R2 needs one; messages have none
		}
		return New(client, c)
	}, mapping)
}

// NewWatermillSubscriber returns a message.Subscriber whose Subscribe(ctx, topic) reads
// the stream topic as a member of cfg.Group (R3 naming), with cfg's loop settings (Stream
// and DLQStream are set per topic; Consumer gets a random suffix per subscription, so
// subscriptions never share pending entries: those of a closed one are claimed after
// ClaimMinIdle). SubscribeInitialize creates the group at cfg.Start ("$" by default,
// R4.1: messages published after it are kept for the group). Close leaves client open.
func NewWatermillSubscriber(client redis.UniversalClient, cfg streams.ConsumerConfig) *wm.Subscriber {
	start := cfg.Start
	if start == "" {
		start = "$"
	}
	backend := NewBackend(client)
	return wm.NewSubscriber(func(topic string) (hub.Consumer, error) {
		c := cfg
		c.Stream, c.DLQStream = topic, ""
		c.Consumer = consumerName(cfg.Consumer)
		return NewConsumer(client, c)
	}, func(topic string) error {
		if err := streams.ValidateGroup(cfg.Group); err != nil {
			return err
		}
		return backend.CreateGroup(context.Background(), topic, cfg.Group, start)
	})
}

// consumerName is base (default "watermill") plus a random suffix.
func consumerName(base string) string {
	if base == "" {
		base = "watermill"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return base + "-" + hex.EncodeToString(b)
}
