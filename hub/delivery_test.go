package hub_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/internal/testenv"
)

func TestF1_DirectDelivery(t *testing.T) {
	t.Parallel()

	t.Run("RetriesTransientErrorsThenSucceeds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var attempts atomic.Int32
		flaky := sendFunc(func(ctx context.Context, batch []*cloudevent.Event) error {
			if attempts.Add(1) < 3 {
				return hub.Errorf(hub.Unavailable, "connection refused")
			}
			return b.mem.Send(ctx, batch)
		})
		if err := b.hub.Forward("user.*", flaky, hub.WithName("flaky"), fastRetry); err != nil {
			t.Fatal(err)
		}
		failed := newCollector()
		b.hub.Subscribe("hub.#", failed.handle)
		if err := b.hub.Publish(context.Background(), event("user.created")); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		if n := attempts.Load(); n != 3 {
			t.Fatalf("attempts = %d, want 3", n)
		}
		if n := b.broker.Len(b.stream); n != 1 || len(failed.all()) != 0 {
			t.Fatalf("delivered %d, failure events %d; want 1 and 0", n, len(failed.all()))
		}
	})

	t.Run("FailureEventAfterThreeAttempts", func(t *testing.T) {
		t.Parallel()
		sink := memtransport.NewBroker()
		sinkTr, _ := memtransport.New(sink, memtransport.Config{Stream: "events.transport"})
		reg := prometheus.NewRegistry()
		b := setup(t, hub.WithFailureSink(sinkTr), hub.WithRegisterer(reg))
		var attempts atomic.Int32
		down := sendFunc(func(context.Context, []*cloudevent.Event) error {
			attempts.Add(1)
			return hub.Errorf(hub.Unavailable, "dial tcp 127.0.0.1:1: connection refused")
		})
		if err := b.hub.Forward("user.*", down, hub.WithName("crm"), fastRetry); err != nil {
			t.Fatal(err)
		}
		failed := newCollector()
		b.hub.Subscribe("hub.transport.failed", failed.handle)
		ev := event("user.created")
		ev.SetExtension(cloudevent.ExtTenantID, "tenant-7")
		ctx := hub.WithCorrelationID(context.Background(), "corr-7")
		if err := b.hub.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
		fe := failed.next(t)
		if fe.Type != hub.TypeTransportFailed || fe.TenantID() != "tenant-7" || fe.CorrelationID() != "corr-7" {
			t.Fatalf("failure event: type %q tenant %q correlation %q", fe.Type, fe.TenantID(), fe.CorrelationID())
		}
		if err := fe.Validate(); err != nil {
			t.Fatalf("failure event invalid: %v", err)
		}
		var data hub.TransportFailure
		if err := json.Unmarshal(fe.Data, &data); err != nil {
			t.Fatal(err)
		}
		want := hub.TransportFailure{EventID: ev.ID, EventType: "user.created", Route: "crm", Transport: "crm",
			Error: "dial tcp 127.0.0.1:1: connection refused", Code: "Unavailable", Attempts: 3}
		if data != want {
			t.Fatalf("failure data = %+v, want %+v", data, want)
		}
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		if n := attempts.Load(); n != 3 {
			t.Fatalf("attempts = %d, want 3", n)
		}
		if got := sink.Events("events.transport"); len(got) != 1 || got[0].ID != fe.ID {
			t.Fatalf("sink got %d events, want the failure event", len(got))
		}
		if n := metricValue(t, reg, "hub_transport_failed_total", "crm"); n != 1 {
			t.Fatalf("hub_transport_failed_total{route=crm} = %v, want 1", n)
		}
	})

	t.Run("NonRetryableErrorIsNotRetried", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var attempts atomic.Int32
		bad := sendFunc(func(context.Context, []*cloudevent.Event) error {
			attempts.Add(1)
			return hub.Errorf(hub.InvalidArgument, "message too large")
		})
		if err := b.hub.Forward("#", bad, hub.WithName("bad"), fastRetry); err != nil {
			t.Fatal(err)
		}
		failed := newCollector()
		b.hub.Subscribe("hub.#", failed.handle)
		if err := b.hub.Publish(context.Background(), event("user.created")); err != nil {
			t.Fatal(err)
		}
		var data hub.TransportFailure
		_ = json.Unmarshal(failed.next(t).Data, &data)
		if data.Attempts != 1 || data.Code != "InvalidArgument" || attempts.Load() != 1 {
			t.Fatalf("attempts %d (failure event says %d, code %s), want 1", attempts.Load(), data.Attempts, data.Code)
		}
	})

	t.Run("CatchAllRouteNeverCarriesHubEvents", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		down := sendFunc(func(context.Context, []*cloudevent.Event) error { return hub.ErrUnavailable })
		if err := b.hub.Forward("user.*", down, hub.WithName("down"), fastRetry); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Forward("*", b.mem); err != nil {
			t.Fatal(err)
		}
		failed := newCollector()
		b.hub.Subscribe("hub.#", failed.handle)
		ev := event("user.created")
		if err := b.hub.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		failed.next(t)
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		for _, got := range b.broker.Events(b.stream) {
			if got.Type != "user.created" {
				t.Fatalf("catch-all route carried %s", got.Type)
			}
		}
	})

	t.Run("PanickingTransportIsARetryableFailure", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var attempts atomic.Int32
		panicky := sendFunc(func(ctx context.Context, batch []*cloudevent.Event) error {
			if attempts.Add(1) == 1 {
				panic("transport bug")
			}
			return b.mem.Send(ctx, batch)
		})
		if err := b.hub.Forward("#", panicky, hub.WithName("panicky"), fastRetry); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Publish(context.Background(), event("user.created")); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		if attempts.Load() != 2 || b.broker.Len(b.stream) != 1 {
			t.Fatalf("attempts %d, delivered %d; want 2 and 1", attempts.Load(), b.broker.Len(b.stream))
		}
	})

	t.Run("BatchesQueuedEvents", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		gate := make(chan struct{})
		var mu sync.Mutex
		var sizes []int
		first := true
		slow := sendFunc(func(ctx context.Context, batch []*cloudevent.Event) error {
			mu.Lock()
			sizes = append(sizes, len(batch))
			wait := first
			first = false
			mu.Unlock()
			if wait {
				<-gate // hold the first Send so the rest queue up
			}
			return b.mem.Send(ctx, batch)
		})
		if err := b.hub.Forward("#", slow, hub.WithName("slow"), hub.WithBatchSize(10)); err != nil {
			t.Fatal(err)
		}
		const n = 31
		for range n {
			if err := b.hub.Publish(context.Background(), event("user.created")); err != nil {
				t.Fatal(err)
			}
		}
		close(gate)
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		total, largest := 0, 0
		for _, s := range sizes {
			total += s
			largest = max(largest, s)
		}
		if total != n || largest != 10 || b.broker.Len(b.stream) != n {
			t.Fatalf("batch sizes %v (total %d, delivered %d), want %d events in batches of at most 10 with a full one", sizes, total, b.broker.Len(b.stream), n)
		}
	})

	t.Run("QueueFullWaitsForRoom", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		gate := make(chan struct{})
		var delivered atomic.Int32
		stuck := sendFunc(func(ctx context.Context, batch []*cloudevent.Event) error {
			<-gate
			delivered.Add(int32(len(batch)))
			return nil
		})
		if err := b.hub.Forward("#", stuck, hub.WithName("stuck"), hub.WithQueueSize(1), hub.WithBatchSize(1)); err != nil {
			t.Fatal(err)
		}
		// One in flight, one queued: the third Publish waits for room, so a short
		// context ends it with DeadlineExceeded rather than losing the event.
		for range 2 {
			if err := b.hub.Publish(context.Background(), event("user.created")); err != nil {
				t.Fatal(err)
			}
		}
		waitCtx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := b.hub.Publish(waitCtx, event("user.created")); hub.Code(err) != hub.DeadlineExceeded {
			t.Fatalf("Publish on a full queue: %v, want DeadlineExceeded", err)
		}
		// Once the transport moves, a waiting Publish gets through and every accepted
		// event is delivered.
		done := make(chan error, 1)
		go func() { done <- b.hub.Publish(context.Background(), event("user.created")) }()
		close(gate)
		if err := <-done; err != nil {
			t.Fatalf("Publish after room appeared: %v", err)
		}
		testenv.WaitFor(t, 5*time.Second, "3 accepted events delivered", func() bool { return delivered.Load() == 3 })
	})

	t.Run("DropWhenFullIsRecordedNotBlocking", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		gate := make(chan struct{})
		stuck := sendFunc(func(ctx context.Context, batch []*cloudevent.Event) error {
			<-gate
			return nil
		})
		if err := b.hub.Forward("#", stuck, hub.WithName("stuck"), hub.WithQueueSize(1), hub.WithBatchSize(1), hub.WithDropWhenFull()); err != nil {
			t.Fatal(err)
		}
		failed := newCollector()
		b.hub.Subscribe("hub.#", failed.handle)
		// One in flight, one queued; the rest find the queue full.
		for range 5 {
			if err := b.hub.Publish(context.Background(), event("user.created")); err != nil {
				t.Fatal(err)
			}
		}
		var data hub.TransportFailure
		_ = json.Unmarshal(failed.next(t).Data, &data)
		if data.Code != "ResourceExhausted" || data.Attempts != 0 {
			t.Fatalf("queue-full failure: code %s attempts %d", data.Code, data.Attempts)
		}
		close(gate)
	})

	t.Run("CloseWakesWaitingPublisher", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		gate := make(chan struct{})
		defer close(gate)
		stuck := sendFunc(func(ctx context.Context, batch []*cloudevent.Event) error {
			select {
			case <-gate:
			case <-ctx.Done():
			}
			return nil
		})
		if err := b.hub.Forward("#", stuck, hub.WithName("stuck"), hub.WithQueueSize(1), hub.WithBatchSize(1)); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := b.hub.Publish(context.Background(), event("user.created")); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() { done <- b.hub.Publish(context.Background(), event("user.created")) }()
		go b.hub.Close()
		if err := <-done; hub.Code(err) != hub.FailedPrecondition {
			t.Fatalf("waiting Publish after Close: %v, want FailedPrecondition", err)
		}
	})

	t.Run("ConcurrencyDeliversEverything", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if err := b.hub.Forward("#", b.mem, hub.WithConcurrency(4), hub.WithBatchSize(7)); err != nil {
			t.Fatal(err)
		}
		const n = 300
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				for range n / 3 {
					if err := b.hub.Publish(context.Background(), event("user.created")); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		if got := b.broker.Len(b.stream); got != n {
			t.Fatalf("published %d, delivered %d", n, got)
		}
	})
}

func TestClose(t *testing.T) {
	t.Parallel()

	t.Run("DrainsQueuedDeliveries", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		gate := make(chan struct{})
		slow := sendFunc(func(ctx context.Context, batch []*cloudevent.Event) error {
			<-gate
			return b.mem.Send(ctx, batch)
		})
		if err := b.hub.Forward("#", slow, hub.WithName("slow"), hub.WithBatchSize(1)); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if err := b.hub.Publish(context.Background(), event("a.b")); err != nil {
				t.Fatal(err)
			}
		}
		closed := make(chan error)
		go func() { closed <- b.hub.Close() }()
		// Close waits: nothing can have been delivered before the gate opens.
		if err := b.hub.Publish(context.Background(), event("a.b")); hub.Code(err) != hub.FailedPrecondition {
			// Close may not have taken the lock yet; intake stops at the latest when it does.
			if err != nil {
				t.Fatalf("Publish during Close = %v", err)
			}
		}
		close(gate)
		if err := <-closed; err != nil {
			t.Fatalf("Close = %v", err)
		}
		if n := b.broker.Len(b.stream); n < 5 {
			t.Fatalf("delivered %d of the 5 events queued before Close", n)
		}
	})

	t.Run("TimeoutCancelsAndRecordsTheRest", func(t *testing.T) {
		t.Parallel()
		b := setup(t, hub.WithCloseTimeout(200*time.Millisecond), hub.WithOutbox(&fakeOutbox{}))
		started := make(chan struct{}, 1)
		blocked := sendFunc(func(ctx context.Context, batch []*cloudevent.Event) error {
			select {
			case started <- struct{}{}:
			default:
			}
			<-ctx.Done()
			return ctx.Err()
		})
		if err := b.hub.Forward("#", blocked, hub.WithName("blocked"), hub.WithBatchSize(1)); err != nil {
			t.Fatal(err)
		}
		// An outbox route has no queue to drain; Close must not wait on one.
		if err := b.hub.Forward("#", b.mem, hub.WithName("stored"), hub.WithDelivery(hub.OutboxMode)); err != nil {
			t.Fatal(err)
		}
		failed := newCollector()
		b.hub.Subscribe("hub.#", failed.handle)
		for range 3 {
			if err := b.hub.Publish(context.Background(), event("a.b")); err != nil {
				t.Fatal(err)
			}
		}
		<-started
		if err := b.hub.Close(); hub.Code(err) != hub.DeadlineExceeded {
			t.Fatalf("Close = %v, want DeadlineExceeded", err)
		}
		if n := len(failed.all()); n != 3 {
			t.Fatalf("failure events after a timed-out Close = %d, want 3 (one per undelivered event)", n)
		}
	})
}

func TestDeliveryChainOrder(t *testing.T) {
	t.Parallel()
	// The order is what makes the behaviours above hold: failure outermost (sees only the
	// final error), retry outside attempt (a span and metric per try), recoverer
	// innermost (a panic is one failed attempt). PanickingTransportIsARetryableFailure
	// and FailureEventAfterThreeAttempts check the behaviour; this pins the list.
	want := []string{"failure", "retry", "attempt", "recoverer"}
	got := hub.DeliveryChainNames()
	if len(got) != len(want) {
		t.Fatalf("chain = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("chain = %v, want %v", got, want)
		}
	}
}

// metricValue returns the counter name{route=route} gathered from reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name, route string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && l.GetValue() == route {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{route=%q} in the registry", name, route)
	return 0
}
