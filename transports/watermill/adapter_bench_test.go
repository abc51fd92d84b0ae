package watermill

import (
	"context"
	"testing"
	"time"

	wmlib "github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub/transporttest"
)

// BenchmarkAdapter: one op = one event published to Watermill's in-memory gochannel
// with no subscriber, the cheapest Pub/Sub there is, so the adapter's own cost is all
// that is measured (on a real broker it disappears in the round trip; see natsjs's
// BenchmarkNATSPublish/base_same_wire).
//   - hub: Transport.Send of one event with a deadline context (closed check, encode,
//     Publish off the caller's goroutine so the context can end the wait, counters);
//   - base_publish: the same Encode and Publish called directly.
//
// cpu-ns/op is the process's CPU time per op (every goroutine, the GC included), the
// steadier figure when other work shares the machine.
func BenchmarkAdapter(b *testing.B) {
	newPubSub := func(b *testing.B) *gochannel.GoChannel {
		gc := gochannel.NewGoChannel(gochannel.Config{}, wmlib.NopLogger{})
		b.Cleanup(func() { _ = gc.Close() })
		return gc
	}
	ev := transporttest.NewEvent(1)
	b.Run("hub", func(b *testing.B) {
		tr, err := NewTransport(newPubSub(b), Config{Topic: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		batch := []*cloudevent.Event{ev}
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if err := tr.Send(ctx, batch); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
		reportCPU(b, cpu)
	})
	b.Run("base_publish", func(b *testing.B) {
		gc := newPubSub(b)
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			msg, err := Encode(ev, ModeBinary)
			if err != nil {
				b.Fatal(err)
			}
			msg.SetContext(ctx)
			if err := gc.Publish("bench", msg); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
		reportCPU(b, cpu)
	})
}

// reportCPU reports the CPU time used since start per op.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}
