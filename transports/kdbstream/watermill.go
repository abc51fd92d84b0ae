package kdbstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	wm "github.com/koder/eventhub/transports/watermill"
)

// kdbstream as a Watermill Pub/Sub: a Watermill topic is a stream of the SQL engine
// (SQLite or PostgreSQL), in the R2 field envelope, and a Watermill consumer group is
// an engine consumer group with claims and the dead-letter stream "<topic>:dlq". The
// same shape as redisstream's, so a Watermill application moves between the two as
// the hub does (R9).

// NewWatermillPublisher returns a message.Publisher: Publish(topic, ...) appends
// through a Transport built from cfg with Stream = topic (one per topic, sharing eng).
// A message without a subject is written with cfg.DefaultSubject, streams.UnspecifiedSubject
// when that is empty (R2's subject_id is mandatory). Close leaves eng open.
func NewWatermillPublisher(eng *engine.Engine, cfg Config, mapping wm.PubSubConfig) *wm.Publisher {
	return wm.NewPublisher(func(topic string) (hub.Transport, error) {
		c := cfg
		c.Stream, c.Service, c.Naming, c.Namer = topic, "", "", nil
		if c.DefaultSubject == "" {
			c.DefaultSubject = streams.UnspecifiedSubject // R2 needs one; messages have none
		}
		return New(eng, c)
	}, mapping)
}

// NewWatermillSubscriber returns a message.Subscriber whose Subscribe(ctx, topic) reads
// the stream topic as a member of cfg.Group (R3 naming), with cfg's loop settings; each
// subscription's Consumer name gets a random suffix. SubscribeInitialize creates the
// group at cfg.Start ("$" by default). Close leaves eng open.
func NewWatermillSubscriber(eng *engine.Engine, cfg streams.ConsumerConfig) *wm.Subscriber {
	start := cfg.Start
	if start == "" {
		start = "$"
	}
	return wm.NewSubscriber(func(topic string) (hub.Consumer, error) {
		c := cfg
		c.Stream, c.DLQStream = topic, ""
		c.Consumer = suffixed(cfg.Consumer)
		return NewConsumer(eng, c)
	}, func(topic string) error {
		if err := streams.ValidateGroup(cfg.Group); err != nil {
			return err
		}
		return eng.CreateGroup(context.Background(), topic, cfg.Group, start)
	})
}

func suffixed(base string) string {
	if base == "" {
		base = "watermill"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return base + "-" + hex.EncodeToString(b)
}
