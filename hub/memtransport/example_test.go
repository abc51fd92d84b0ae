package memtransport_test

import (
	"context"
	"fmt"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/hub/transporttest"
)

func ExampleNew() {
	broker := memtransport.NewBroker()
	tr, err := memtransport.New(broker, memtransport.Config{Stream: "events.user"})
	if err != nil {
		panic(err)
	}
	defer tr.Close()
	_ = tr.Send(context.Background(), transporttest.NewEvents(2))
	fmt.Println(broker.Len("events.user"))
	// Output: 2
}

func ExampleNewConsumer() {
	broker := memtransport.NewBroker()
	tr, _ := memtransport.New(broker, memtransport.Config{Stream: "events.user"})
	c, err := memtransport.NewConsumer(broker, memtransport.ConsumerConfig{Stream: "events.user", Group: "audit"})
	if err != nil {
		panic(err)
	}
	got := make(chan string, 1)
	_ = c.Start(context.Background(), func(ctx context.Context, ev *cloudevent.Event) error {
		got <- ev.Subject
		return nil
	})
	defer c.Close()
	_ = tr.Send(context.Background(), transporttest.NewEvents(1))
	fmt.Println(<-got)
	// Output: subject-0
}
