package hub_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/schema"
)

// benchEvent is a valid identity event of the built-in catalogue.
func benchEvent() *cloudevent.Event {
	ev := cloudevent.New("/identity", "user.created")
	ev.SetExtension(cloudevent.ExtTenantID, "tenant-1")
	ev.SetExtension(cloudevent.ExtActor, "system")
	ev.SetExtension(cloudevent.ExtDataVersion, "1.0.0")
	ev.Subject = "usr_01J9Z3"
	_ = ev.SetData("", map[string]any{
		"user_id": "usr_01J9Z3", "email": "zoe@example.com", "created_at": "2026-11-30T10:00:00Z",
	})
	return ev
}

// BenchmarkPublish compares hub.Publish (defaults, cloudevent validation, JSON Schema
// validation against schema.Builtin(), copy, route match, queue, batched Send to
// memtransport) with publishing the JSON-encoded event to Watermill's gochannel. Both
// include delivery to the end: the hub's run closes the hub (draining the route) and
// gochannel's waits until a subscriber acked every message. One op is one event.
func BenchmarkPublish(b *testing.B) {
	ctx := context.Background()
	b.Run("hub", func(b *testing.B) {
		broker := memtransport.NewBroker()
		mem, _ := memtransport.New(broker, memtransport.Config{Stream: "bench", MaxLen: 10000})
		h, err := hub.New(hub.WithLogger(slog.New(slog.DiscardHandler)), hub.WithRegistry(schema.Builtin()))
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Forward("user.*", mem); err != nil {
			b.Fatal(err)
		}
		tmpl := benchEvent()
		b.ReportAllocs()
		start := time.Now()
		for b.Loop() {
			ev := tmpl.Clone()
			if err := h.Publish(ctx, ev); err != nil {
				b.Fatal(err)
			}
		}
		if err := h.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
		if n := broker.Len("bench"); n != b.N {
			b.Fatalf("delivered %d of %d", n, b.N)
		}
	})
	b.Run("base_gochannel", func(b *testing.B) {
		pubsub := gochannel.NewGoChannel(gochannel.Config{OutputChannelBuffer: 1024}, watermill.NopLogger{})
		defer pubsub.Close()
		msgs, err := pubsub.Subscribe(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		var got atomic.Int64
		tick := make(chan struct{}, 1)
		go func() {
			for m := range msgs {
				m.Ack()
				got.Add(1)
				select {
				case tick <- struct{}{}:
				default:
				}
			}
		}()
		tmpl := benchEvent()
		b.ReportAllocs()
		start := time.Now()
		for b.Loop() {
			payload, err := json.Marshal(tmpl)
			if err != nil {
				b.Fatal(err)
			}
			if err := pubsub.Publish("bench", message.NewMessage(tmpl.ID, payload)); err != nil {
				b.Fatal(err)
			}
		}
		for got.Load() < int64(b.N) {
			<-tick
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
	})
}
