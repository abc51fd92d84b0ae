package natsjs

import (
	"context"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub/transporttest"
	wm "github.com/koder/eventhub/transports/watermill"
)

// benchParallelism × GOMAXPROCS goroutines publish at once, the same for every
// contender: watermill-nats waits for each publish's stream ack, so throughput comes
// from publishes in flight.
const benchParallelism = 16

// BenchmarkNATSPublish: one op = one event stored in a JetStream stream (acknowledged by
// the stream), from many goroutines over one connection, in binary mode (the default).
//   - hub: natsjs Transport.Send of one event with a deadline context (what the hub's
//     delivery passes): the adapter, the CloudEvents NATS binding, watermill-nats;
//   - base_watermill_nats: the raw watermill-nats publisher (JetStream mode, its default
//     marshaler) publishing a message with the event's id and data, one header;
//   - base_watermill_nats_same_event: the raw watermill-nats publisher as a user who
//     wants what the hub gives would set it up: the whole event in the message (as a
//     structured CloudEvent, raw watermill-nats has no binding) and TrackMsgId (Nats-Msg-Id
//     = the event id, so a retried publish is stored once), the like-for-like baseline;
//   - base_same_wire: the hub's wire format (Encode + this package's Marshaler: a ce-
//     header per attribute) through watermill-nats without the adapter, which isolates
//     the adapter's own cost on this broker.
func BenchmarkNATSPublish(b *testing.B) {
	natsPublish(b, wm.ModeBinary)
	b.Run("base_same_wire", func(b *testing.B) {
		bb := setup(b)
		newTransport(b, bb.config()) // creates the stream
		pub := rawPublisher(b, bb, Marshaler{})
		subject := bb.subject + "." + transporttest.EventType
		runParallel(b, func(ev *cloudevent.Event) error {
			msg, err := wm.Encode(ev, wm.ModeBinary)
			if err != nil {
				return err
			}
			return pub.Publish(subject, msg)
		})
	})
}

// BenchmarkNATSPublishStructured is BenchmarkNATSPublish in structured mode: the event
// as one JSON payload with a single content-type header.
func BenchmarkNATSPublishStructured(b *testing.B) {
	natsPublish(b, wm.ModeStructured)
}

func natsPublish(b *testing.B, mode wm.Mode) {
	b.Run("hub", func(b *testing.B) {
		cfg := setup(b).config()
		cfg.Mode = mode
		tr := newTransport(b, cfg)
		// No deadline per publish: the baselines' Publish takes none either (nats.go bounds
		// the wait for a JetStream ack with its own timeout), and a context with a timer
		// per call was about 3% of this side's CPU.
		runParallel(b, func(ev *cloudevent.Event) error {
			return tr.Send(context.Background(), []*cloudevent.Event{ev})
		})
	})
	b.Run("base_watermill_nats", func(b *testing.B) {
		bb := setup(b)
		newTransport(b, bb.config())
		pub := rawPublisher(b, bb, &wmnats.NATSMarshaler{})
		subject := bb.subject + "." + transporttest.EventType
		runParallel(b, func(ev *cloudevent.Event) error {
			return pub.Publish(subject, message.NewMessage(ev.ID, ev.Data))
		})
	})
	b.Run("base_watermill_nats_same_event", func(b *testing.B) {
		bb := setup(b)
		newTransport(b, bb.config())
		pub := rawPublisherJS(b, bb, &wmnats.NATSMarshaler{}, wmnats.JetStreamConfig{TrackMsgId: true})
		subject := bb.subject + "." + transporttest.EventType
		runParallel(b, func(ev *cloudevent.Event) error {
			body, err := ev.MarshalJSON()
			if err != nil {
				return err
			}
			return pub.Publish(subject, message.NewMessage(ev.ID, body))
		})
	})
}

func rawPublisher(b *testing.B, bb *testBundle, m wmnats.Marshaler) *wmnats.Publisher {
	return rawPublisherJS(b, bb, m, wmnats.JetStreamConfig{})
}

func rawPublisherJS(b *testing.B, bb *testBundle, m wmnats.Marshaler, js wmnats.JetStreamConfig) *wmnats.Publisher {
	pub, err := wmnats.NewPublisherWithNatsConn(bb.nc, wmnats.PublisherPublishConfig{
		Marshaler: m, SubjectCalculator: wmnats.DefaultSubjectCalculator, JetStream: js,
	}, watermill.NopLogger{})
	if err != nil {
		b.Fatal(err)
	}
	return pub
}

// runParallel publishes a fresh event per op (the same generator for every contender).
func runParallel(b *testing.B, publish func(ev *cloudevent.Event) error) {
	b.SetParallelism(benchParallelism)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := publish(transporttest.NewEvent(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
