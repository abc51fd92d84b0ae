package streams_test

import (
	"context"
	"log"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/streams"
)

// A backend (redisstream.NewBackend, or kdbstream's engine) plus a Config make a
// consumer with R4's behaviour; Start runs it in the background.
func ExampleNew() {
	var backend streams.Backend // redisstream.NewBackend(client), or kdbstream's engine
	c, err := streams.New(backend, streams.Config{
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
