package eventbus_test

import (
	"context"
	"log"

	"github.com/koder/eventhub/eventbus"
	"github.com/koder/eventhub/streams"
)

// Open reads KODER_EVENT_BUS (and KODER_REDIS_URL or KODER_KDB_URL), so the same
// program runs on Redis today and on kdbstream after the migration.
func ExampleOpen() {
	ctx := context.Background()
	bus, err := eventbus.Open(ctx, eventbus.Options{Service: "id"}) // koder:events:id
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()
	c, err := bus.NewConsumer(streams.ConsumerConfig{
		Stream: "koder:events:id", Group: "auth-erasure-cascade", Consumer: "auth-1",
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = c // c.Start(ctx, handler) runs the R4 loop on whichever bus is open
}
