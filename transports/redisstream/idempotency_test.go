package redisstream

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
)

func TestR5_IdempotencyStore(t *testing.T) {
	t.Parallel()
	testIdempotencyStore(t, newClient(t))
}

// testIdempotencyStore is TestR5_IdempotencyStore on client (one server or a cluster).
func testIdempotencyStore(t *testing.T, c redis.UniversalClient) {
	ctx := testenv.Context(t, time.Minute)
	prefix := "test:" + testenv.Name(t) + ":"
	s := NewIdempotencyStore(c, prefix)
	key := "auth-erasure-cascade:evt_1"
	t.Cleanup(func() { c.Del(ctx, prefix+key) })

	if seen, err := s.Seen(ctx, key); err != nil || seen {
		t.Fatalf("Seen before MarkProcessed = %v, %v", seen, err)
	}
	if err := s.MarkProcessed(ctx, key, 0); err != nil {
		t.Fatal(err)
	}
	if seen, err := s.Seen(ctx, key); err != nil || !seen {
		t.Fatalf("Seen after MarkProcessed = %v, %v", seen, err)
	}
	ttl, err := c.TTL(ctx, prefix+key).Result()
	if err != nil || ttl <= hub.DefaultIdempotencyTTL-time.Minute || ttl > hub.DefaultIdempotencyTTL {
		t.Fatalf("TTL = %v, %v; want about %v (R5)", ttl, err, hub.DefaultIdempotencyTTL)
	}
	// SET NX: marking again keeps the first record and its expiry.
	if err := s.MarkProcessed(ctx, key, time.Hour); err != nil {
		t.Fatalf("second MarkProcessed: %v", err)
	}
	if ttl2, _ := c.TTL(ctx, prefix+key).Result(); ttl2 < time.Hour*23 {
		t.Fatalf("second MarkProcessed changed the TTL to %v", ttl2)
	}
	if seen, _ := s.Seen(ctx, "auth-erasure-cascade:evt_2"); seen {
		t.Fatal("another key is seen")
	}
}
