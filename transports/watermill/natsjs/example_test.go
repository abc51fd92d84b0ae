package natsjs_test

import (
	"context"
	"log"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/transports/watermill/natsjs"
)

// Publish to a JetStream stream and consume it with a durable; dead letters go to the
// stream "events_dlq". (Needs a NATS server with JetStream.)
func ExampleNew() {
	ctx := context.Background()
	cfg := natsjs.Config{URL: "nats://127.0.0.1:4222", Stream: "events", Subject: "events", Durable: "billing-ingest"}
	tr, err := natsjs.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
	c, err := natsjs.NewConsumer(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx, func(ctx context.Context, ev *cloudevent.Event) error {
		log.Println("got", ev.Type)
		return nil
	}); err != nil {
		log.Fatal(err)
	}
	ev := cloudevent.New("/billing", "billing.invoice.paid").SetTenantID("acme")
	if err := tr.Send(ctx, []*cloudevent.Event{ev}); err != nil { // stored in "events.billing.invoice.paid"
		log.Fatal(err)
	}
}
