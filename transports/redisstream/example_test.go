package redisstream_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/redisstream"
)

// Open connects from a URL: rediss:// with an ACL user in production (R7), plain
// redis:// in development. An empty URL reads KODER_REDIS_URL.
func ExampleOpen() {
	ctx := context.Background()
	tr, err := redisstream.Open(ctx, "rediss://auth-svc:secret@redis.internal:6379/0?service=id")
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()

	ev := cloudevent.New("/identity", "identity.user.erased").SetTenantID("tenant-A").SetActor("system").SetSubject("user-u123")
	_ = ev.SetData(cloudevent.ContentTypeJSON, map[string]string{"erasure_id": "ERS-2026-05-14-abc12345"})
	// XADD koder:events:id MAXLEN ~ 100000 * type ... event_id ... data ...
	if err := tr.Send(ctx, []*cloudevent.Event{ev}); err != nil {
		log.Print(hub.Code(err), err) // Unavailable when Redis is down: the hub retries
	}
}

// New wraps a go-redis client the caller owns; forward events to it from a hub.
func ExampleNew() {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	tr, err := redisstream.New(client, redisstream.Config{
		Service:  "id",                    // koder:events:id (R1)
		MinIDAge: redisstream.RetentionE8, // also trim entries older than 7 days
	})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()

	h, err := hub.New()
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	_ = h.Forward("identity.#", tr)
}

// A consumer group of the auth service (R3, R4): idempotent by event id (R5),
// dead-letters after 3 failed deliveries.
func ExampleNewConsumer() {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	c, err := redisstream.NewConsumer(client, streams.ConsumerConfig{
		Stream:      "koder:events:id",
		Group:       "auth-erasure-cascade",
		Consumer:    "auth-7f9c",
		Idempotency: redisstream.NewIdempotencyStore(client, ""),
	})
	if err != nil {
		log.Fatal(err)
	}
	err = c.Start(context.Background(), func(ctx context.Context, ev *cloudevent.Event) error {
		fmt.Println("erase sessions of", ev.Subject)
		return nil // nil acks; an error leaves the entry pending for a retry
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close() // finishes the entry in hand; the rest stays pending, nothing is lost
}

// Dead letters are listed, inspected, replayed to their source stream, or purged (W3).
func ExampleDLQ_Replay() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	dlq := redisstream.NewDLQ(client, "koder:events:id:dlq")
	letters, err := dlq.List(ctx, "", 10)
	if err != nil {
		log.Fatal(err)
	}
	for _, dl := range letters {
		fmt.Println(dl.ID, dl.Fields["type"], dl.Reason, dl.Error, dl.Deliveries)
		if dl.Reason == "max_deliveries" {
			if _, err := dlq.Replay(ctx, dl.ID); err != nil {
				log.Print(err)
			}
		}
	}
}

// The R5 store remembers processed event ids for 24 hours by default.
func ExampleNewIdempotencyStore() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	store := redisstream.NewIdempotencyStore(client, "")
	key := "auth-erasure-cascade:evt_01J0000000000000000000000"
	if seen, _ := store.Seen(ctx, key); !seen {
		// ... handle ...
		_ = store.MarkProcessed(ctx, key, 0)
	}
}

// ParseURL shows what a URL configures; every query parameter is a Config field or a
// go-redis option, anything else is an error.
func ExampleParseURL() {
	opts, cfg, err := redisstream.ParseURL("rediss://alice:secret@redis.internal:6380/2?naming=category&max_len=500000&min_id_age=168h", redisstream.Config{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(opts.Addr, opts.Username, opts.DB, opts.TLSConfig != nil)
	fmt.Println(cfg.Naming, cfg.MaxLen, cfg.MinIDAge == 7*24*time.Hour)
	_, _, err = redisstream.ParseURL("rediss://alice:secret@redis.internal:6380/2?maxlen=5", redisstream.Config{})
	fmt.Println(err)
	// Output:
	// redis.internal:6380 alice 2 true
	// category 500000 true
	// redisstream: URL rediss://alice:xxxxx@redis.internal:6380/2?maxlen=5: redis: unexpected option: maxlen
}

// WarnIfVolatile logs a warning when Redis keeps nothing on disk (E6).
func ExampleWarnIfVolatile() {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	redisstream.WarnIfVolatile(context.Background(), client, nil)
}
