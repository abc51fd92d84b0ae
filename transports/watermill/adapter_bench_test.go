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
//     Publish on the caller's goroutine, counters);
//   - base_publish: the same Encode and Publish called directly.
//
// cpu-ns/op is the process's CPU time per op (every goroutine, the GC included), the
// steadier figure when other work shares the machine.
func BenchmarkAdapter(b *testing.B) { benchAdapter(b, Config{Topic: "bench"}) }

// BenchmarkAdapterGuarded is BenchmarkAdapter with Config.GuardPublish (how the binary
// runs watermill-amqp): Publish handed to a worker goroutine so the context can end the
// wait, which is what the guard costs over an inline call.
func BenchmarkAdapterGuarded(b *testing.B) {
	benchAdapter(b, Config{Topic: "bench", GuardPublish: true})
}

func benchAdapter(b *testing.B, cfg Config) {
	newPubSub := func(b *testing.B) *gochannel.GoChannel {
		gc := gochannel.NewGoChannel(gochannel.Config{}, wmlib.NopLogger{})
		b.Cleanup(func() { _ = gc.Close() })
		return gc
	}
	ev := transporttest.NewEvent(1)
	b.Run("hub", func(b *testing.B) {
		tr, err := NewTransport(newPubSub(b), cfg)
		if err != nil {
			b.Fatal(err)
		}
		batch := []*cloudevent.Event{ev}
		benchOps(b, func(ctx context.Context) error { return tr.Send(ctx, batch) })
	})
	b.Run("base_publish", func(b *testing.B) {
		gc := newPubSub(b)
		benchOps(b, func(ctx context.Context) error {
			msg, err := Encode(ev, ModeBinary)
			if err != nil {
				return err
			}
			msg.SetContext(ctx)
			return gc.Publish("bench", msg)
		})
	})
}

// benchOps runs op b.N times, each with a deadline context, and reports CPU per op.
func benchOps(b *testing.B, op func(ctx context.Context) error) {
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := op(ctx); err != nil {
			b.Fatal(err)
		}
		cancel()
	}
	reportCPU(b, cpu)
}

// reportCPU reports the CPU time used since start per op.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}
