// Command quickstart builds a hub in-process with the in-memory transport, publishes an
// identity.user.erased event and prints it arriving at a consumer of the stream and at
// an in-process subscriber. Nothing to install:
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/schema"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	// The hub validates payloads against the built-in identity catalogue.
	h, err := hub.New(hub.WithRegistry(schema.Builtin()), hub.WithLogger(logger))
	if err != nil {
		return err
	}
	defer h.Close()

	// A transport: the in-memory stream "events.identity". Redis, RabbitMQ, webhooks
	// and kdbstream plug in the same way.
	broker := memtransport.NewBroker()
	tr, err := memtransport.New(broker, memtransport.Config{Stream: "events.identity"})
	if err != nil {
		return err
	}
	defer tr.Close()
	if err := h.Forward("identity.#", tr); err != nil {
		return err
	}

	// A consumer group on that stream, as another service would run it.
	consumer, err := memtransport.NewConsumer(broker, memtransport.ConsumerConfig{Stream: "events.identity", Group: "auth-erasure-cascade"})
	if err != nil {
		return err
	}
	received := make(chan *cloudevent.Event, 1)
	if err := consumer.Start(ctx, func(ctx context.Context, ev *cloudevent.Event) error {
		received <- ev
		return nil
	}); err != nil {
		return err
	}
	defer consumer.Close()

	// And an in-process subscriber: same-process code sees the event synchronously.
	h.Subscribe("identity.user.*", func(ctx context.Context, ev *cloudevent.Event) error {
		fmt.Printf("subscriber: %s %s (tenant %s)\n", ev.Type, ev.ID, ev.TenantID())
		return nil
	})

	ev := cloudevent.New("/identity", "identity.user.erased")
	ev.SetTenantID("acme").SetActor("admin:42").SetSubject("user:u1")
	if err := ev.SetData(cloudevent.ContentTypeJSON, map[string]any{
		"erasure_id": "era_1", "user_id": "u1", "erased_at": time.Now().UTC().Format(time.RFC3339),
	}); err != nil {
		return err
	}
	if err := h.Publish(ctx, ev); err != nil {
		return err
	}
	fmt.Printf("published:  %s %s\n", ev.Type, ev.ID)

	select {
	case got := <-received:
		fmt.Printf("consumer:   %s %s data=%s\n", got.Type, got.ID, got.Data)
	case <-time.After(5 * time.Second):
		return fmt.Errorf("the event did not arrive within 5s")
	}

	// An invalid payload fails Publish at once, naming the field.
	bad := cloudevent.New("/identity", "identity.user.erased").SetTenantID("acme")
	_ = bad.SetData(cloudevent.ContentTypeJSON, map[string]any{"user_id": "u1"})
	fmt.Printf("invalid:    %v\n", h.Publish(ctx, bad))
	return nil
}
