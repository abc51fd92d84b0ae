package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// TestE2E_Sources feeds the real binary from its three stream sources, a Redis stream
// group (with an entry written by hand exactly as in seed 000), a RabbitMQ queue (a
// plain amqp091 publish in the CloudEvents binary binding) and a kdbstream group, and
// finds every event forwarded to a Redis stream.
func TestE2E_Sources(t *testing.T) {
	t.Parallel()
	redisURL, rabbitURL := testenv.RedisURL(t), testenv.RabbitURL(t)
	name := testenv.Name(t)
	dir := t.TempDir()
	in, out := "e2e-in:"+name, "e2e-out:"+name
	exchange, queue := "e2e-in."+name, "e2e-in."+name
	admin := freeAddr(t)

	opts, _ := redis.ParseURL(redisURL)
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Del(context.Background(), in, out, in+":dlq"); rdb.Close() })

	cfg := writeConfig(t, dir, fmt.Sprintf(`
store:
  sqlite: data/hub.db
sources:
  from_redis:
    type: redisstream
    url: %[1]s
    stream: %[2]s
    group: hub-ingest
    consumer: e2e
    block: 200ms
  from_rabbit:
    type: rabbitmq
    url: %[3]s
    exchange: %[4]s
    queue: %[5]s
  from_kdb:
    type: kdbstream
    stream: in
    group: hub-ingest
    consumer: e2e
    block: 200ms
transports:
  out:
    type: redisstream
    url: %[1]s
    stream: %[6]s
routes:
  - pattern: "#"
    to: out
    default_subject: unspecified  # the RabbitMQ message has no subject; out is R2
admin:
  listen: %[7]s
`, redisURL, in, rabbitURL, exchange, queue, out, admin))
	p := startHub(t, cfg, admin)
	t.Cleanup(func() {
		conn, err := amqp.Dial(rabbitURL)
		if err == nil {
			if ch, err := conn.Channel(); err == nil {
				for _, q := range []string{queue, queue + ".retry", queue + ".dlq"} {
					_, _ = ch.QueueDelete(q, false, false, false)
				}
				_ = ch.ExchangeDelete(exchange, false, false)
			}
			conn.Close()
		}
	})
	ctx := testenv.Context(t, time.Minute)

	// Redis: the seed-000 entry, by hand (no source field: the consumer derives it).
	redisID := cloudevent.NewID()
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: in, Values: []string{
		"type", "identity.user.erased", "event_id", redisID, "occurred_at", "2026-01-01T00:00:00Z",
		"tenant_id", "acme", "subject_id", "user:u1", "actor", "system", "data", `{"erasure_id":"era_r","user_id":"u1"}`,
	}}).Err(); err != nil {
		t.Fatal(err)
	}

	// RabbitMQ: a plain publish in the binary binding.
	rabbitID := cloudevent.NewID()
	conn, err := amqp.Dial(rabbitURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.PublishWithContext(ctx, exchange, "identity.user.erased", false, false, amqp.Publishing{
		ContentType: "application/json", DeliveryMode: amqp.Persistent,
		Headers: amqp.Table{"cloudEvents:specversion": "1.0", "cloudEvents:id": rabbitID, "cloudEvents:source": "/e2e",
			"cloudEvents:type": "identity.user.erased", "cloudEvents:tenantid": "acme"},
		Body: []byte(`{"erasure_id":"era_q","user_id":"u2"}`),
	}); err != nil {
		t.Fatal(err)
	}

	// kdbstream: an R2 entry appended to the hub's own database by another process.
	kdbID := cloudevent.NewID()
	eng, err := kdbstream.OpenEngine(ctx, "sqlite://"+filepath.Join(dir, "data", "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ev := cloudevent.New("/e2e", "identity.user.erased").SetTenantID("acme").SetSubject("user:u3")
	ev.ID = kdbID
	_ = ev.SetData("application/json", map[string]string{"erasure_id": "era_k", "user_id": "u3"})
	fields, err := cloudevent.EncodeFields(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := eng.XAdd(ctx, engine.Add{Stream: "in", Values: fields}); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{redisID: "redis", rabbitID: "rabbitmq", kdbID: "kdbstream"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		msgs, err := rdb.XRange(ctx, out, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		got := map[string]bool{}
		for _, m := range msgs {
			id, _ := m.Values["event_id"].(string)
			got[id] = true
		}
		for id, src := range want {
			if !got[id] {
				missing = append(missing, src)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s, events from %v are missing from the output stream (%d entries)\n%s", missing, len(msgs), p.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code := p.stop(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0\n%s", code, p.log())
	}
}
