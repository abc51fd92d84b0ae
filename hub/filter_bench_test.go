package hub_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/schema"
)

// BenchmarkPublishFiltered is what a route filter adds to Publish: hub is a route with
// a CESQL filter on an extension and a data path (the event passes), base_unfiltered
// the same route without one. Both validate against schema.Builtin() and deliver to
// memtransport to the end, as BenchmarkPublish does. One op is one event.
func BenchmarkPublishFiltered(b *testing.B) {
	run := func(b *testing.B, opts ...hub.RouteOption) {
		broker := memtransport.NewBroker()
		mem, _ := memtransport.New(broker, memtransport.Config{Stream: "bench", MaxLen: 10000})
		h, err := hub.New(hub.WithLogger(slog.New(slog.DiscardHandler)), hub.WithRegistry(schema.Builtin()))
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Forward("user.*", mem, opts...); err != nil {
			b.Fatal(err)
		}
		tmpl := benchEvent()
		b.ReportAllocs()
		for b.Loop() {
			if err := h.Publish(context.Background(), []*cloudevent.Event{tmpl.Clone()}...); err != nil {
				b.Fatal(err)
			}
		}
		if err := h.Close(); err != nil {
			b.Fatal(err)
		}
		_ = mem.Close()
		_ = broker.Close()
	}
	b.Run("hub", func(b *testing.B) {
		run(b, hub.WithFilter("tenantid = 'tenant-1' AND data.email LIKE '%@example.com'"))
	})
	b.Run("base_unfiltered", func(b *testing.B) { run(b) })
}
