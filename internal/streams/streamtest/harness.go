// Package streamtest is seed 000's test contract (T1-T5, N2, plus crash recovery and
// claiming from a dead consumer) as one suite over a streamloop.Backend, so the Redis
// transport and kdbstream prove the same behaviour with the same code.
//
// A backend plugs in with a Harness and one test per contract item:
//
//	func TestT1_RoundTrip(t *testing.T) { t.Parallel(); streamtest.T1RoundTrip(t, harness(t)) }
//
// or all at once with streamtest.Run(t, harness(t)). Every test uses its own stream
// (testenv.Name), so the suite runs in parallel against one shared server.
package streamtest

import (
	"context"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	streamloop "github.com/koder/eventhub/internal/streams"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// Harness is what a backend gives the suite. Every function must be safe for
// concurrent use by parallel tests.
type Harness struct {
	// Backend is the implementation under test.
	Backend streamloop.Backend
	// Append writes one entry with exactly these flat fields (key, value pairs), by-passing
	// the event codec: how the suite writes hand-made and malformed entries.
	Append func(ctx context.Context, stream string, fields ...string) error
	// Publisher returns the backend's hub.Transport writing every event to stream. The
	// harness closes it at the end of t.
	Publisher func(t *testing.T, stream string) hub.Transport
	// PublisherWire is Publisher with an entry format of the test's choice (encoding,
	// default actor and subject).
	PublisherWire func(t *testing.T, stream string, w streams.Wire) hub.Transport
	// Range returns the values of every entry of stream, oldest first.
	Range func(ctx context.Context, stream string) ([]map[string]string, error)
	// Pending returns the number of entries of stream pending in group.
	Pending func(ctx context.Context, stream, group string) (int64, error)
	// Idempotency returns a fresh R5 store for the test, or nil when the backend has none
	// (the R5 part of T2 is then skipped).
	Idempotency func(t *testing.T) hub.IdempotencyStore
	// Transport labels metrics ("redisstream", "kdbstream").
	Transport string
	// ClaimMinIdle overrides FastConfig's claim idle time (0: 150ms). A backend whose
	// round trips are slower (SQL commits under -race on a loaded machine) sets it higher,
	// or T5's entries get claimed from a consumer still holding them.
	ClaimMinIdle time.Duration
	// DLQFor names a stream's dead-letter stream (nil: "<stream>:dlq"). Redis Cluster
	// needs one in the stream's hash slot.
	DLQFor func(stream string) string
}

// DLQ is the dead-letter stream the suite gives a consumer of stream.
func (h Harness) DLQ(stream string) string {
	if h.DLQFor != nil {
		return h.DLQFor(stream)
	}
	return stream + streams.DLQSuffix
}

// Run runs the whole contract as parallel subtests.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"T1RoundTrip", T1RoundTrip},
		{"T1HandWrittenEntry", T1HandWrittenEntry},
		{"T2Idempotency", T2Idempotency},
		{"T3RetryAfterClaim", T3RetryAfterClaim},
		{"T4DeadLetter", T4DeadLetter},
		{"T5ConcurrentConsumers", T5ConcurrentConsumers},
		{"N2Malformed", N2Malformed},
		{"E5UnknownMajor", E5UnknownMajor},
		{"RestartRereadsOwnPending", RestartRereadsOwnPending},
		{"ClaimFromDeadConsumer", ClaimFromDeadConsumer},
		{"CloseDrains", CloseDrains},
		{"ConcurrencyOption", ConcurrencyOption},
		{"DeadLetterAfterCrashes", DeadLetterAfterCrashes},
		{"E4PublishFromHandler", E4PublishFromHandler},
		{"R2NeverEmpty", R2NeverEmpty},
		{"R2EmptyFieldMalformed", R2EmptyFieldMalformed},
		{"E1Seed001RoundTrip", E1Seed001RoundTrip},
		{"E1HandWrittenEntry", E1HandWrittenEntry},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h)
		})
	}
}

// FastConfig is a consumer configuration for tests: short blocks and claim times so a
// retry takes a fraction of a second instead of R4's production timings.
func FastConfig(t *testing.T, h Harness, stream string) streams.ConsumerConfig {
	minIdle := 150 * time.Millisecond
	if h.ClaimMinIdle > 0 {
		minIdle = h.ClaimMinIdle
	}
	return streams.ConsumerConfig{
		Stream:        stream,
		DLQStream:     h.DLQ(stream),
		Group:         "test-" + testenv.Name(t),
		Consumer:      "c1",
		Start:         "0",
		Block:         100 * time.Millisecond,
		ClaimMinIdle:  minIdle,
		ClaimInterval: 50 * time.Millisecond,
		DrainTimeout:  5 * time.Second,
		DefaultSource: "/streamtest",
		Transport:     h.Transport,
		Logger:        testenv.Logger(t),
	}
}

// StartConsumer builds and starts a consumer, closing it at the end of t.
func StartConsumer(t *testing.T, h Harness, cfg streams.ConsumerConfig, fn hub.Handler) *streamloop.Consumer {
	t.Helper()
	c, err := streamloop.New(h.Backend, cfg)
	if err != nil {
		t.Fatalf("streamloop.New: %v", err)
	}
	if err := c.Start(testenv.Context(t, time.Minute), fn); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// NewEvent returns a valid event carrying every R2 field.
func NewEvent(t testing.TB, typ, subject string) *cloudevent.Event {
	t.Helper()
	ev := cloudevent.New("/streamtest", typ).SetTenantID("tenant-A").SetActor("system").SetSubject(subject)
	if err := ev.SetData(cloudevent.ContentTypeJSON, map[string]any{"subject": subject, "note": "ünïcode ✓"}); err != nil {
		t.Fatalf("SetData: %v", err)
	}
	return ev
}

// Publish sends events through the harness publisher.
func Publish(t *testing.T, tr hub.Transport, evs ...*cloudevent.Event) {
	t.Helper()
	if err := tr.Send(testenv.Context(t, 10*time.Second), evs); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

// WaitPending waits until group has want pending entries in stream.
func WaitPending(t *testing.T, h Harness, stream, group string, want int64) {
	t.Helper()
	var got int64
	testenv.WaitFor(t, 10*time.Second, "pending entries to settle", func() bool {
		n, err := h.Pending(context.Background(), stream, group)
		got = n
		return err == nil && n == want
	})
	_ = got
}

// WaitLen waits until stream holds want entries and returns them.
func WaitLen(t *testing.T, h Harness, stream string, want int) []map[string]string {
	t.Helper()
	var got []map[string]string
	testenv.WaitFor(t, 10*time.Second, "stream "+stream+" to hold entries", func() bool {
		es, err := h.Range(context.Background(), stream)
		got = es
		return err == nil && len(es) >= want
	})
	return got
}

// recv waits for one value from ch.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	d := 10 * time.Second
	if testenv.InCI() {
		d *= 2
	}
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("timed out after %s waiting for %s", d, what)
	}
	var zero T
	return zero
}
