package streams_test

import (
	"context"
	"log"

	"github.com/koder/eventhub/cloudevent"
	streamloop "github.com/koder/eventhub/internal/streams"
	"github.com/koder/eventhub/streams"
)

// A backend (redisstream.NewBackend, or kdbstream's engine) plus a ConsumerConfig make
// a consumer with R4's behaviour; Start runs it in the background.
func ExampleNew() {
	var backend streamloop.Backend // redisstream.NewBackend(client), or kdbstream's engine
	c, err := streamloop.New(backend, streams.ConsumerConfig{
		Stream: "koder:events:id", Group: "auth-erasure-cascade", Consumer: "auth-1",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_ = c.Start(context.Background(), func(ctx context.Context, ev *cloudevent.Event) error {
		return nil
	})
}
