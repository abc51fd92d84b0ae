package watermill_test

import (
	"context"
	"fmt"

	wmlib "github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/transports/watermill"
)

// Any Watermill Pub/Sub as a hub transport and as a consumer: here Watermill's
// in-memory gochannel; watermill-amqp, watermill-kafka or watermill-nats plug in the
// same way.
func ExampleNewTransport() {
	pubsub := gochannel.NewGoChannel(gochannel.Config{Persistent: true}, wmlib.NopLogger{})
	defer pubsub.Close()

	tr, err := watermill.NewTransport(pubsub, watermill.Config{Topic: "identity"})
	if err != nil {
		panic(err)
	}
	defer tr.Close()

	done := make(chan struct{})
	c, err := watermill.NewConsumer(pubsub, watermill.ConsumerConfig{Topic: "identity", DeadLetter: pubsub})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if err := c.Start(context.Background(), func(ctx context.Context, ev *cloudevent.Event) error {
		fmt.Println("handled", ev.Type, "for", ev.TenantID())
		close(done)
		return nil // ack; an error nacks, and after MaxDeliveries dead-letters
	}); err != nil {
		panic(err)
	}

	ev := cloudevent.New("/identity", "identity.user.created").SetTenantID("acme")
	if err := tr.Send(context.Background(), []*cloudevent.Event{ev}); err != nil {
		panic(err)
	}
	<-done
	// Output: handled identity.user.created for acme
}

// The mapping: binary mode keeps the data as the payload and the attributes in "ce_"
// metadata.
func ExampleEncode() {
	ev := cloudevent.New("/identity", "identity.user.created").SetTenantID("acme")
	_ = ev.SetData("application/json", map[string]string{"user_id": "u1"})
	msg, err := watermill.Encode(ev, watermill.ModeBinary)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(msg.Payload), msg.Metadata.Get("ce_type"), msg.Metadata.Get("ce_tenantid"))
	back, _ := watermill.Decode(msg)
	fmt.Println(back.ID == ev.ID)
	// Output:
	// {"user_id":"u1"} identity.user.created acme
	// true
}

// A publisher whose constructor dials (watermill-amqp's) built at the first Send, so
// the process starts while the broker is down.
func ExampleLazyPublisher() {
	pub := watermill.LazyPublisher(func() (message.Publisher, error) {
		return gochannel.NewGoChannel(gochannel.Config{}, wmlib.NopLogger{}), nil
	})
	tr, _ := watermill.NewTransport(pub, watermill.Config{Topic: "t", ClosePublisher: true})
	defer tr.Close()
	fmt.Println(tr.Send(context.Background(), []*cloudevent.Event{cloudevent.New("/s", "a.b").SetTenantID("t1")}))
	// Output: <nil>
}
