package hub_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/koder/eventhub/hub"
)

// fakeOutbox records what the hub enqueues; err makes every call fail.
type fakeOutbox struct {
	mu    sync.Mutex
	items []hub.OutboxItem
	txs   []any
	err   error
}

func (o *fakeOutbox) Enqueue(_ context.Context, items []hub.OutboxItem) error {
	return o.EnqueueTx(context.Background(), nil, items)
}

func (o *fakeOutbox) EnqueueTx(_ context.Context, tx any, items []hub.OutboxItem) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	o.items = append(o.items, items...)
	o.txs = append(o.txs, tx)
	return nil
}

func (o *fakeOutbox) destinations() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, it := range o.items {
		out = append(out, it.Destination)
	}
	return out
}

func TestO1_OutboxMode(t *testing.T) {
	t.Parallel()

	t.Run("EnqueuesOneRowPerDestinationBeforeReturning", func(t *testing.T) {
		t.Parallel()
		ob := &fakeOutbox{}
		b := setup(t, hub.WithOutbox(ob))
		for _, name := range []string{"crm", "billing"} {
			if err := b.hub.Forward("user.#", b.mem, hub.WithName(name), hub.WithDelivery(hub.OutboxMode)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.hub.Forward("user.#", b.mem, hub.WithName("direct")); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Publish(context.Background(), event("user.created")); err != nil {
			t.Fatal(err)
		}
		if got := ob.destinations(); len(got) != 2 || got[0] != "crm" || got[1] != "billing" {
			t.Fatalf("outbox rows for %v, want [crm billing] as Publish returns", got)
		}
	})

	t.Run("OutboxFailureFailsPublishAndSendsNothing", func(t *testing.T) {
		t.Parallel()
		down := hub.Errorf(hub.Unavailable, "outbox: database is down")
		ob := &fakeOutbox{err: down}
		b := setup(t, hub.WithOutbox(ob))
		if err := b.hub.Forward("#", b.mem, hub.WithName("crm"), hub.WithDelivery(hub.OutboxMode)); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Forward("#", b.mem, hub.WithName("direct")); err != nil {
			t.Fatal(err)
		}
		local := newCollector()
		b.hub.Subscribe("#", local.handle)
		if err := b.hub.Publish(context.Background(), event("user.created")); !errors.Is(err, down) {
			t.Fatalf("Publish = %v, want the outbox's error", err)
		}
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		if n, l := b.broker.Len(b.stream), len(local.all()); n != 0 || l != 0 {
			t.Fatalf("after an outbox failure: %d sent directly, %d to subscribers; want 0 and 0", n, l)
		}
	})
}

func TestPublishTx(t *testing.T) {
	t.Parallel()

	t.Run("WithoutOutboxFailsWithFailedPrecondition", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if err := b.hub.PublishTx(context.Background(), "tx", event("a")); hub.Code(err) != hub.FailedPrecondition {
			t.Fatalf("PublishTx = %v, want FailedPrecondition", err)
		}
	})

	t.Run("EveryMatchingRouteGoesThroughEnqueueTx", func(t *testing.T) {
		t.Parallel()
		ob := &fakeOutbox{}
		b := setup(t, hub.WithOutbox(ob))
		if err := b.hub.Forward("user.#", b.mem, hub.WithName("direct")); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Forward("#", b.mem, hub.WithName("crm"), hub.WithDelivery(hub.OutboxMode)); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Forward("session.#", b.mem, hub.WithName("other")); err != nil {
			t.Fatal(err)
		}
		tx := &struct{ name string }{"tx-1"}
		if err := b.hub.PublishTx(context.Background(), tx, event("user.created")); err != nil {
			t.Fatal(err)
		}
		if got := ob.destinations(); len(got) != 2 || got[0] != "direct" || got[1] != "crm" {
			t.Fatalf("EnqueueTx rows for %v, want [direct crm]", got)
		}
		if ob.txs[0] != tx {
			t.Fatalf("EnqueueTx got tx %v, want the caller's", ob.txs[0])
		}
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		if n := b.broker.Len(b.stream); n != 0 {
			t.Fatalf("PublishTx sent %d events directly, want 0 (the relay delivers after commit)", n)
		}
	})

	t.Run("InvalidEventFailsBeforeEnqueue", func(t *testing.T) {
		t.Parallel()
		ob := &fakeOutbox{}
		b := setup(t, hub.WithOutbox(ob))
		if err := b.hub.Forward("#", b.mem); err != nil {
			t.Fatal(err)
		}
		ev := event("a")
		ev.Extensions = nil // no tenantid
		if err := b.hub.PublishTx(context.Background(), "tx", ev); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("PublishTx = %v, want InvalidArgument", err)
		}
		if len(ob.destinations()) != 0 {
			t.Fatal("an invalid event reached the outbox")
		}
	})
}
