package kdbstream

import (
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"

	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	wm "github.com/koder/eventhub/transports/watermill"
)

// TestWM_KdbstreamUniversal runs Watermill's own universal Pub/Sub suite on kdbstream
// offered as a Watermill Pub/Sub, on both engines (a SQLite file, and PostgreSQL on the
// real server). Each run has a database of its own, dropped at the end.
func TestWM_KdbstreamUniversal(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			eng := openEngine(t, db)
			tests.TestPubSub(t, tests.Features{
				ConsumerGroups:                      true,  // Redis consumer-group semantics
				ExactlyOnceDelivery:                 false, // at-least-once: a claimed entry can come twice
				GuaranteedOrder:                     true,  // one reader per subscription, one handler at a time
				GuaranteedOrderWithSingleSubscriber: true,  // group members interleave
				Persistent:                          true,  // the stream is stored; a group resumes where it was
				RestartServiceCommand:               nil,   // the database is shared (PostgreSQL) or a file; no restart
				RequireSingleInstance:               false,
				NewSubscriberReceivesOldMessages:    false, // a group reads from where it is, not the history
				ContextPreserved:                    false,
			}, func(t *testing.T) (message.Publisher, message.Subscriber) {
				return newKdbWatermill(t, eng, "wm-default")
			}, func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
				return newKdbWatermill(t, eng, "wm-"+strings.ReplaceAll(strings.ToLower(group), "_", "-"))
			})
		})
	}
}

func newKdbWatermill(t *testing.T, eng *engine.Engine, group string) (message.Publisher, message.Subscriber) {
	pub := NewWatermillPublisher(eng, Config{}, wm.PubSubConfig{})
	sub := NewWatermillSubscriber(eng, streams.ConsumerConfig{
		Group: group, Consumer: "wm",
		Block: 100 * time.Millisecond, ClaimMinIdle: 500 * time.Millisecond, ClaimInterval: 100 * time.Millisecond,
		MaxDeliveries: 1000, // the suite's nacks are not failures to dead-letter
		DrainTimeout:  5 * time.Second,
	})
	// Close again at the end (idempotent): the suite's TestPublishSubscribeInOrder
	// closes its multiplied subscriber before subscribing it.
	t.Cleanup(func() { _ = pub.Close(); _ = sub.Close() })
	return pub, sub
}
