package rabbitmq

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
)

// benchParallelism × GOMAXPROCS goroutines publish at once: that is the number of
// confirms in flight for every contender (the same window for all).
const benchParallelism = 32

// BenchmarkPublishConfirmed: one op = one event published and confirmed by the broker
// into a durable queue, from many goroutines.
//   - hub: Transport.Send of one event (4 channels, async confirm tracking);
//   - base_raw_amqp091: the same strategy written directly on amqp091-go (4 confirm-mode
//     channels, PublishWithDeferredConfirm, wait for each own confirm concurrently);
//   - base_watermill: watermill-amqp v3 NewDurablePubSubConfig defaults with
//     ConfirmDelivery on (the only way it confirms): a channel per publish and one
//     confirm waited for in turn.
func BenchmarkPublishConfirmed(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		bb := setup(b)
		cfg := bb.config(b)
		cfg.Logger = nil
		newConsumer(b, cfg)
		tr := newTransport(b, cfg)
		b.SetParallelism(benchParallelism)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := tr.Send(context.Background(), []*cloudevent.Event{benchEvent()}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})

	b.Run("base_raw_amqp091", func(b *testing.B) {
		bb := setup(b)
		cfg := bb.config(b)
		newConsumer(b, cfg)
		conn, err := amqp.Dial(bb.url)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		chans := make([]*amqp.Channel, DefaultChannels)
		for i := range chans {
			if chans[i], err = conn.Channel(); err != nil {
				b.Fatal(err)
			}
			if err := chans[i].Confirm(false); err != nil {
				b.Fatal(err)
			}
		}
		var next atomic.Uint64
		b.SetParallelism(benchParallelism)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				// Encoding is part of the job: the raw publisher sends the same wire format.
				ev := benchEvent()
				p, _ := encode(ev, ModeBinary, time.Now())
				ch := chans[next.Add(1)%uint64(len(chans))]
				conf, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), bb.exchange, ev.Type, true, false, p)
				if err != nil {
					b.Error(err)
					return
				}
				if ok, err := conf.WaitContext(context.Background()); !ok || err != nil {
					b.Errorf("not confirmed: %v", err)
					return
				}
			}
		})
	})

	b.Run("base_watermill", func(b *testing.B) {
		bb := setup(b)
		pub, topic := watermillPublisher(b, bb)
		b.SetParallelism(benchParallelism)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ev := benchEvent()
				msg := message.NewMessage(ev.ID, ev.Data)
				if err := pub.Publish(topic, msg); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkPublishConfirmedBatch: one op = one event, published by a single goroutine
// in batches of benchBatch and confirmed. This is where the confirm strategy shows:
//   - hub: one Send per batch, every confirm awaited concurrently;
//   - base_raw_amqp091: the batch published with PublishWithDeferredConfirm on one
//     channel, then every confirm awaited;
//   - base_watermill: Publish(topic, batch...), which waits for each confirm in turn.
func BenchmarkPublishConfirmedBatch(b *testing.B) {
	const benchBatch = 100
	batches := func(b *testing.B, send func([]*cloudevent.Event) error) {
		b.ReportAllocs()
		b.ResetTimer()
		for sent := 0; sent < b.N; sent += benchBatch {
			b.StopTimer()
			evs := make([]*cloudevent.Event, min(benchBatch, b.N-sent))
			for i := range evs {
				evs[i] = benchEvent()
			}
			b.StartTimer()
			if err := send(evs); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("hub", func(b *testing.B) {
		bb := setup(b)
		cfg := bb.config(b)
		cfg.Logger = nil
		newConsumer(b, cfg)
		tr := newTransport(b, cfg)
		batches(b, func(evs []*cloudevent.Event) error { return tr.Send(context.Background(), evs) })
	})
	b.Run("base_raw_amqp091", func(b *testing.B) {
		bb := setup(b)
		newConsumer(b, bb.config(b))
		conn, err := amqp.Dial(bb.url)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		ch, _ := conn.Channel()
		if err := ch.Confirm(false); err != nil {
			b.Fatal(err)
		}
		confs := make([]*amqp.DeferredConfirmation, 0, benchBatch)
		batches(b, func(evs []*cloudevent.Event) error {
			confs = confs[:0]
			for _, ev := range evs {
				p, _ := encode(ev, ModeBinary, time.Now())
				c, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), bb.exchange, ev.Type, true, false, p)
				if err != nil {
					return err
				}
				confs = append(confs, c)
			}
			for _, c := range confs {
				if ok, err := c.WaitContext(context.Background()); !ok || err != nil {
					return fmt.Errorf("not confirmed: %v", err)
				}
			}
			return nil
		})
	})
	b.Run("base_watermill", func(b *testing.B) {
		bb := setup(b)
		pub, topic := watermillPublisher(b, bb)
		batches(b, func(evs []*cloudevent.Event) error {
			msgs := make([]*message.Message, len(evs))
			for i, ev := range evs {
				msgs[i] = message.NewMessage(ev.ID, ev.Data)
			}
			return pub.Publish(topic, msgs...)
		})
	})
}

// watermillPublisher builds watermill-amqp's durable pub/sub publisher with confirms and
// a durable queue bound to its fanout exchange, so messages are stored like ours.
func watermillPublisher(b *testing.B, bb *testBundle) (*wamqp.Publisher, string) {
	wcfg := wamqp.NewDurablePubSubConfig(bb.url, nil)
	wcfg.Publish.ConfirmDelivery = true
	pub, err := wamqp.NewPublisher(wcfg, watermill.NopLogger{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = pub.Close() })
	topic := bb.exchange // the fanout exchange is named after the topic
	if err := bb.admin.ExchangeDeclare(topic, "fanout", true, false, false, false, nil); err != nil {
		b.Fatal(err)
	}
	if _, err := bb.admin.QueueDeclare(bb.queue, true, false, false, false, nil); err != nil {
		b.Fatal(err)
	}
	if err := bb.admin.QueueBind(bb.queue, "", topic, false, nil); err != nil {
		b.Fatal(err)
	}
	return pub, topic
}

// BenchmarkConsume: one op = one event taken from a pre-filled durable queue, handled
// and acked. hub runs the Consumer (decode, validate, metrics, handler, ack) with the
// default prefetch and one handler; base_raw_amqp091 consumes and acks with plain
// amqp091-go at the same prefetch, without decoding.
func BenchmarkConsume(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		bb := setup(b)
		cfg := bb.config(b)
		cfg.Logger = nil
		c := newConsumer(b, cfg)
		fill(b, bb, b.N)
		done := make(chan struct{})
		var n atomic.Int64
		target := int64(b.N)
		b.ReportAllocs()
		b.ResetTimer()
		if err := c.Start(context.Background(), func(context.Context, *cloudevent.Event) error {
			if n.Add(1) == target {
				close(done)
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		<-done
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})

	b.Run("base_raw_amqp091", func(b *testing.B) {
		bb := setup(b)
		cfg := bb.config(b)
		newConsumer(b, cfg).Close()
		fill(b, bb, b.N)
		conn, err := amqp.Dial(bb.url)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		ch, _ := conn.Channel()
		if err := ch.Qos(DefaultPrefetch, 0, false); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		deliveries, err := ch.Consume(bb.queue, "", false, false, false, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		for range b.N {
			d := <-deliveries
			if err := d.Ack(false); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// fill publishes n events into the bundle's queue with confirms, outside the timer.
func fill(b *testing.B, bb *testBundle, n int) {
	b.Helper()
	cfg := bb.config(b)
	cfg.Logger = nil
	tr := newTransport(b, cfg)
	const batch = 200
	for sent := 0; sent < n; sent += batch {
		evs := make([]*cloudevent.Event, min(batch, n-sent))
		for i := range evs {
			evs[i] = benchEvent()
		}
		if err := tr.Send(context.Background(), evs); err != nil {
			b.Fatal(err)
		}
	}
}

func benchEvent() *cloudevent.Event {
	ev := cloudevent.New("/eventhub/bench", "bench.event.created")
	ev.SetTenantID("tenant-bench")
	ev.Data = []byte(`{"user_id":"usr_01J9ZQ4","email":"bench@example.com","plan":"pro","seats":12,"note":"two hundred bytes of payload, roughly, to match the research runs"}`)
	return ev
}
