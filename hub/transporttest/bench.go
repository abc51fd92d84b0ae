package transporttest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
)

// BenchBatch is the batch size of the batched benchmarks.
const BenchBatch = 100

// Bench is the benchmark every transport shares. One op is one event, so ns/op compares
// across transports and batch sizes:
//   - send_1: one event per Send (a round trip per event);
//   - send_batch: BenchBatch events per Send;
//   - end_to_end: batches sent and all of them handled by a consumer.
func Bench(b *testing.B, newHarness func(b *testing.B) Harness) {
	b.Run("send_1", func(b *testing.B) {
		h := newHarness(b)
		ev := NewEvent(1)
		batch := []*cloudevent.Event{ev}
		b.ReportAllocs()
		for b.Loop() {
			if err := h.Transport().Send(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("send_batch", func(b *testing.B) {
		h := newHarness(b)
		batch := NewEvents(BenchBatch)
		b.ReportAllocs()
		b.ResetTimer()
		for sent := 0; sent < b.N; sent += BenchBatch {
			n := min(BenchBatch, b.N-sent)
			if err := h.Transport().Send(context.Background(), batch[:n]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("end_to_end", func(b *testing.B) {
		h := newHarness(b)
		done := make(chan struct{})
		var handled atomic.Int64
		target := int64(b.N)
		stop := h.Consume("", func(context.Context, *cloudevent.Event) error {
			if handled.Add(1) == target {
				close(done)
			}
			return nil
		})
		defer stop()
		b.ResetTimer()
		for sent := 0; sent < b.N; sent += BenchBatch {
			// Fresh ids per batch: transports that deduplicate by id must still deliver.
			b.StopTimer()
			batch := NewEvents(min(BenchBatch, b.N-sent))
			b.StartTimer()
			if err := h.Transport().Send(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-done:
		case <-time.After(timeout()):
			b.Fatalf("handled %d of %d events", handled.Load(), target)
		}
		b.StopTimer()
	})
}
