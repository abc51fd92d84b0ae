package hub_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/schema"
)

func ExampleNew() {
	h, err := hub.New(
		hub.WithRegistry(schema.Builtin()), // validate payloads against the identity catalogue
		hub.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))),
	)
	if err != nil {
		panic(err)
	}
	defer h.Close()
	fmt.Println("ready")
	// Output: ready
}

func ExampleHub_Forward() {
	h, _ := hub.New()
	broker := memtransport.NewBroker()
	users, _ := memtransport.New(broker, memtransport.Config{Stream: "events.user", Name: "users"})

	// Every user.* event, three attempts with backoff, up to 50 events per Send.
	if err := h.Forward("user.*", users, hub.WithBatchSize(50)); err != nil {
		panic(err)
	}
	ev := cloudevent.New("/identity", "user.verified")
	ev.SetExtension(cloudevent.ExtTenantID, "tenant-1")
	_ = h.Publish(context.Background(), ev)
	_ = h.Close() // drains the route
	fmt.Println(broker.Len("events.user"))
	// Output: 1
}

func ExampleHub_Publish() {
	h, _ := hub.New(hub.WithRegistry(schema.Builtin()))
	defer h.Close()

	// The tenant and correlation id usually come from request middleware.
	ctx := hub.WithTenant(context.Background(), "tenant-1")
	ctx = hub.WithCorrelationID(ctx, "req-42")

	ev := cloudevent.New("/identity", "user.created")
	_ = ev.SetData("", map[string]any{"user_id": "usr_1", "email": "a@example.com", "created_at": "2026-01-01T00:00:00Z"})
	if err := h.Publish(ctx, ev); err != nil {
		panic(err)
	}
	fmt.Println(ev.TenantID(), ev.CorrelationID(), ev.DataVersion())

	bad := cloudevent.New("/identity", "user.created")
	_ = bad.SetData("", map[string]any{"email": "not-an-email"})
	err := h.Publish(ctx, bad)
	fmt.Println(hub.Code(err))
	// Output:
	// tenant-1 req-42 1.0.0
	// InvalidArgument
}

func ExampleHub_Subscribe() {
	h, _ := hub.New()
	defer h.Close()
	cancel := h.Subscribe("session.#", func(ctx context.Context, ev *cloudevent.Event) error {
		fmt.Println("got", ev.Type, "for", ev.TenantID())
		return nil
	})
	defer cancel()

	ev := cloudevent.New("/identity", "session.revoked")
	ev.SetExtension(cloudevent.ExtTenantID, "tenant-1")
	_ = h.Publish(context.Background(), ev)
	// Output: got session.revoked for tenant-1
}

// printOutbox is a stand-in for the outbox package: it prints the rows it would insert.
type printOutbox struct{}

func (printOutbox) Enqueue(ctx context.Context, items []hub.OutboxItem) error {
	return printOutbox{}.EnqueueTx(ctx, nil, items)
}

func (printOutbox) EnqueueTx(_ context.Context, tx any, items []hub.OutboxItem) error {
	for _, it := range items {
		fmt.Printf("tx=%v row: %s -> %s\n", tx, it.Event.Type, it.Destination)
	}
	return nil
}

func ExampleHub_PublishTx() {
	h, _ := hub.New(hub.WithOutbox(printOutbox{}))
	defer h.Close()
	broker := memtransport.NewBroker()
	crm, _ := memtransport.New(broker, memtransport.Config{Stream: "crm"})
	_ = h.Forward("organization.#", crm, hub.WithName("crm"), hub.WithDelivery(hub.OutboxMode))

	// tx is the caller's *sql.Tx or pgx.Tx: the rows commit or roll back with it.
	var tx any = "tx-1"
	ev := cloudevent.New("/identity", "organization.created")
	ev.SetExtension(cloudevent.ExtTenantID, "tenant-1")
	if err := h.PublishTx(context.Background(), tx, ev); err != nil {
		panic(err)
	}
	// Output: tx=tx-1 row: organization.created -> crm
}

func ExampleMatch() {
	fmt.Println(hub.Match("user.*", "user.created"))
	fmt.Println(hub.Match("a.*.c", "a.b.b.c"))
	fmt.Println(hub.Match("#.created", "identity.user.created"))
	fmt.Println(hub.Match("*", "hub.transport.failed")) // the catch-all excludes the hub's own events
	// Output:
	// true
	// false
	// true
	// false
}

func ExampleCompilePattern() {
	p, err := hub.CompilePattern("identity.#")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Match("identity"), p.Match("identity.user.erased"))
	_, err = hub.CompilePattern("user..created")
	fmt.Println(hub.Code(err))
	// Output:
	// true true
	// InvalidArgument
}

func ExampleIdempotent() {
	store := hub.NewMemoryIdempotencyStore()
	h := hub.Idempotent(store, "billing", func(ctx context.Context, ev *cloudevent.Event) error {
		fmt.Println("charging for", ev.Subject)
		return nil
	})
	ev := cloudevent.New("/identity", "membership.created")
	ev.Subject = "mem_1"
	_ = h(context.Background(), ev)
	_ = h(context.Background(), ev) // redelivered: skipped
	// Output: charging for mem_1
}

func ExampleContextWithEvent() {
	// In a consumer: events published by the handler inherit tenant and correlation id.
	in := cloudevent.New("/identity", "user.deleted")
	in.SetExtension(cloudevent.ExtTenantID, "tenant-1")
	in.SetExtension(cloudevent.ExtCorrelationID, "req-42")
	ctx := hub.ContextWithEvent(context.Background(), in)
	fmt.Println(hub.TenantFrom(ctx), hub.CorrelationIDFrom(ctx))
	// Output: tenant-1 req-42
}

func ExampleNewMemoryIdempotencyStore() {
	store := hub.NewMemoryIdempotencyStore()
	ctx := context.Background()
	_ = store.MarkProcessed(ctx, "billing:evt_1", hub.DefaultIdempotencyTTL)
	seen, _ := store.Seen(ctx, "billing:evt_1")
	fmt.Println(seen)
	// Output: true
}

// r2Stream stands for a Redis Streams or kdbstream transport writing R2 entries, whose
// subject_id is mandatory: it reports it through hub.SubjectRequirer.
type r2Stream struct{ hub.Transport }

func (r2Stream) RequiresSubject() bool { return true }

// A route to an R2 stream refuses events without a subject at Publish, naming the
// route, unless it has a default subject for them.
func ExampleWithDefaultSubject() {
	h, _ := hub.New()
	defer h.Close()
	broker := memtransport.NewBroker()
	mem, _ := memtransport.New(broker, memtransport.Config{Stream: "koder:events:id"})
	_ = h.Forward("identity.#", r2Stream{mem}, hub.WithName("bus"))

	ev := cloudevent.New("/identity", "identity.sweep.finished").SetTenantID("tenant-1")
	fmt.Println(h.Publish(context.Background(), ev))

	h2, _ := hub.New()
	_ = h2.Forward("identity.#", r2Stream{mem}, hub.WithName("bus"), hub.WithDefaultSubject("tenant"))
	fmt.Println(h2.Publish(context.Background(), ev))
	_ = h2.Close() // drains the route
	fmt.Println(broker.Events("koder:events:id")[0].Subject)
	// Output:
	// cloudevent: invalid event: subject: required by route "bus", whose transport cannot carry an event without one (R2: subject_id is mandatory): set the event's subject, or give the route a default subject (WithDefaultSubject; routes[].default_subject in the hub config)
	// <nil>
	// tenant
}

func ExampleWithFilter() {
	h, _ := hub.New()
	broker := memtransport.NewBroker()
	pro, _ := memtransport.New(broker, memtransport.Config{Stream: "events.pro", Name: "pro"})

	// Only acme's pro-plan events take this route; a bad expression fails Forward with
	// its line:col.
	if err := h.Forward("subscription.*", pro, hub.WithFilter("tenantid = 'acme' AND data.plan = 'pro'")); err != nil {
		panic(err)
	}
	for _, plan := range []string{"free", "pro"} {
		ev := cloudevent.New("/billing", "subscription.changed").SetTenantID("acme")
		_ = ev.SetData("application/json", map[string]string{"plan": plan})
		_ = h.Publish(context.Background(), ev)
	}
	_ = h.Close()
	fmt.Println(broker.Len("events.pro"))
	// Output: 1
}
