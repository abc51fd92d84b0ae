package rabbitmq_test

import (
	"context"
	"fmt"
	"log"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/transports/rabbitmq"
)

// A publisher on the durable topic exchange "eventhub"; Send returns once the broker
// confirmed every event.
func ExampleNew() {
	ctx := context.Background()
	tr, err := rabbitmq.New(ctx, rabbitmq.Config{URL: "amqp://guest:guest@127.0.0.1:5672/"})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
	ev := cloudevent.New("/identity", "identity.user.created").SetTenantID("t_1")
	if err := tr.Send(ctx, []*cloudevent.Event{ev}); err != nil {
		log.Fatal(err) // hub.Code(err): Unavailable during an outage, NotFound if unroutable
	}
}

// The same from a URL: one query parameter per Config field.
func ExampleOpen() {
	tr, err := rabbitmq.Open(context.Background(), "amqp://guest:guest@127.0.0.1:5672/?exchange=events&channels=8")
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
}

// A consumer group: a durable quorum queue bound with hub patterns; failed events are
// retried after a delay, then dead-lettered.
func ExampleNewConsumer() {
	ctx := context.Background()
	c, err := rabbitmq.NewConsumer(ctx, rabbitmq.Config{
		URL:       "amqp://guest:guest@127.0.0.1:5672/",
		Queue:     "billing.invoicer",
		Patterns:  []string{"identity.user.*", "order.#"},
		QueueType: rabbitmq.QueueQuorum,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	err = c.Start(ctx, func(ctx context.Context, ev *cloudevent.Event) error {
		fmt.Println(ev.Type, ev.TenantID())
		return nil // acked only now
	})
	if err != nil {
		log.Fatal(err)
	}
}

func ExampleOpenConsumer() {
	c, err := rabbitmq.OpenConsumer(context.Background(), "amqp://guest:guest@127.0.0.1:5672/?queue=billing.invoicer&patterns=order.%23&prefetch=50")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}

// Operators list, replay and purge a group's dead letters.
func ExampleOpenDLQ() {
	ctx := context.Background()
	d, err := rabbitmq.OpenDLQ(ctx, rabbitmq.Config{URL: "amqp://guest:guest@127.0.0.1:5672/", Queue: "billing.invoicer"})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	letters, err := d.List(ctx, 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, dl := range letters {
		fmt.Println(dl.ID, dl.Reason, dl.Error)
	}
	if _, err := d.Replay(ctx); err != nil { // all of them, with fresh retries
		log.Fatal(err)
	}
}

func ExampleParseURL() {
	cfg, err := rabbitmq.ParseURL("amqps://app:secret@rabbit.internal/prod?queue=svc&queue_type=quorum&retry_delay=10s")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.URL, cfg.Queue, cfg.QueueType, cfg.RetryDelay)
	// Output: amqps://app:secret@rabbit.internal/prod svc quorum 10s
}
