package redisstream

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
)

// DefaultIdempotencyPrefix starts every key of the idempotency store.
const DefaultIdempotencyPrefix = "koder:processed:"

// IdempotencyStore is R5's processed-events record on Redis: one key per processed
// event (prefix + "<group>:<event id>"), written with SET NX and a TTL (24 h by default,
// hub.DefaultIdempotencyTTL), so the window expires by itself and needs no sweeper.
type IdempotencyStore struct {
	client redis.UniversalClient
	prefix string
}

// NewIdempotencyStore returns a store over client; an empty prefix means
// DefaultIdempotencyPrefix.
func NewIdempotencyStore(client redis.UniversalClient, prefix string) *IdempotencyStore {
	if prefix == "" {
		prefix = DefaultIdempotencyPrefix
	}
	return &IdempotencyStore{client: client, prefix: prefix}
}

// Seen reports whether key was marked processed within its TTL.
func (s *IdempotencyStore) Seen(ctx context.Context, key string) (bool, error) {
	n, err := s.client.Exists(ctx, s.prefix+key).Result()
	return n > 0, classify(err)
}

// MarkProcessed records key for ttl (0 means hub.DefaultIdempotencyTTL). SET NX keeps
// the first record's expiry: a redelivery does not extend the window.
func (s *IdempotencyStore) MarkProcessed(ctx context.Context, key string, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = hub.DefaultIdempotencyTTL
	}
	err := s.client.SetArgs(ctx, s.prefix+key, "1", redis.SetArgs{Mode: "NX", TTL: ttl}).Err()
	if errors.Is(err, redis.Nil) {
		return nil // already recorded
	}
	return classify(err)
}

var _ hub.IdempotencyStore = (*IdempotencyStore)(nil)
