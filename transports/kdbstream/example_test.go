package kdbstream_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// Open a publisher on a SQLite file: events of service "id" go to koder:events:id.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "kdbstream")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	tr, err := kdbstream.Open(ctx, "kdbstream://"+filepath.Join(dir, "events.db")+"?service=id")
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
	ev := cloudevent.New("/id", "user.created").SetTenantID("t1").SetActor("system").SetSubject("u1")
	_ = ev.SetData(cloudevent.ContentTypeJSON, map[string]string{"user_id": "u1"})
	if err := tr.Send(ctx, []*cloudevent.Event{ev}); err != nil {
		log.Fatal(err)
	}
	n, _ := tr.Engine().XLen(ctx, "koder:events:id")
	fmt.Println("entries:", n)
	// Output: entries: 1
}

// PostgreSQL, shared by several hub processes; the tables live in schema "events".
func ExampleOpenWith() {
	tr, err := kdbstream.OpenWith(context.Background(),
		"postgres://hub@db.internal/hub?sslmode=require&schema=events&naming=category",
		kdbstream.Config{MaxLen: 500000})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
}

// A consumer with the Redis transport's configuration, on the transport's engine.
func ExampleNewConsumer() {
	dir, _ := os.MkdirTemp("", "kdbstream")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	eng, err := engine.Open(ctx, engine.Config{Driver: engine.DriverSQLite, DSN: filepath.Join(dir, "events.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	idem, err := kdbstream.NewIdempotencyStore(ctx, eng, "")
	if err != nil {
		log.Fatal(err)
	}
	c, err := kdbstream.NewConsumer(eng, streams.ConsumerConfig{
		Stream: "koder:events:id", Group: "auth-erasure-cascade", Consumer: "auth-1", Idempotency: idem,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Start(ctx, func(ctx context.Context, ev *cloudevent.Event) error { return nil }); err != nil {
		log.Fatal(err)
	}
	_ = c.Close()
}

// New wraps an engine the caller keeps.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "kdbstream")
	defer os.RemoveAll(dir)
	eng, err := engine.Open(context.Background(), engine.Config{Driver: engine.DriverSQLite, DSN: filepath.Join(dir, "events.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	tr, err := kdbstream.New(eng, kdbstream.Config{Naming: streams.NamingCategory, MinIDAge: 7 * 24 * time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
	fmt.Println(tr.Name())
	// Output: kdbstream
}

// Migrate streams from Redis after a dry run, reporting progress on stderr.
func ExampleMigrate() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	eng, err := kdbstream.OpenEngine(ctx, "kdbstream:///var/lib/hub/events.db")
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	opts := kdbstream.MigrateOptions{Streams: []string{"koder:events:id"}, DryRun: true}
	rep, err := kdbstream.Migrate(ctx, rdb, eng, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("would copy %d entries\n", rep.Streams[0].Copied)
	opts.DryRun = false
	opts.Progress = func(p kdbstream.Progress) {
		fmt.Fprintf(os.Stderr, "%s: %d of %d\n", p.Stream, p.Done, p.Total)
	}
	if rep, err = kdbstream.Migrate(ctx, rdb, eng, opts); err != nil {
		log.Fatalf("%v: %v", err, rep)
	}
}

// NewIdempotencyStore records processed events in the engine's database (R5).
func ExampleNewIdempotencyStore() {
	dir, _ := os.MkdirTemp("", "kdbstream")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	eng, err := engine.Open(ctx, engine.Config{Driver: engine.DriverSQLite, DSN: filepath.Join(dir, "events.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	s, err := kdbstream.NewIdempotencyStore(ctx, eng, "auth-erasure-cascade:")
	if err != nil {
		log.Fatal(err)
	}
	_ = s.MarkProcessed(ctx, "evt_01", 0)
	seen, _ := s.Seen(ctx, "evt_01")
	fmt.Println(seen)
	// Output: true
}
