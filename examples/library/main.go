// Command library is the README's library example, kept compiling: a hub that validates
// against the built-in catalogue, forwards user events to Redis Streams directly and
// every event to kdbstream, then publishes one event. Run it with a Redis on
// 127.0.0.1:6379 (or KODER_REDIS_URL): go run ./examples/library
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/schema"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/redisstream"
)

func main() {
	ctx := context.Background()
	if os.Getenv("KODER_REDIS_URL") == "" {
		os.Setenv("KODER_REDIS_URL", "redis://127.0.0.1:6379/0")
	}
	redis, err := redisstream.OpenWith(ctx, "", redisstream.Config{Service: "id"}) // koder:events:id (R1)
	if err != nil {
		log.Fatal(err)
	}
	dir, _ := os.MkdirTemp("", "eventhub-example")
	defer os.RemoveAll(dir)
	kdb, err := kdbstream.OpenWith(ctx, "kdbstream://"+filepath.Join(dir, "events.db"), kdbstream.Config{Naming: streams.NamingCategory})
	if err != nil {
		log.Fatal(err)
	}

	h, err := hub.New(hub.WithRegistry(schema.Builtin()), hub.WithSource("identity"))
	if err != nil {
		log.Fatal(err)
	}
	must(h.Forward("user.*", redis)) // RabbitMQ topic syntax: * one word, # zero or more
	must(h.Forward("#", kdb))        // every event, hub.* lifecycle events included
	done := make(chan struct{})
	cancel := h.Subscribe("user.deleted", func(_ context.Context, ev *cloudevent.Event) error {
		fmt.Println("in-process subscriber got", ev.Type, ev.ID, "tenant", ev.TenantID())
		close(done)
		return nil
	})
	defer cancel()

	ev := cloudevent.New("identity", "user.deleted").SetSubject("user-u123").SetActor("system")
	must(ev.SetData("application/json", map[string]any{"user_id": "u123", "deleted_at": time.Now().UTC()}))
	// The tenant comes from the context; invalid data would fail here, naming every field.
	must(h.Publish(hub.WithTenant(ctx, "acme"), ev))
	<-done
	must(h.Close()) // drains in-flight deliveries
	must(redis.Close())
	must(kdb.Close())
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
