package kdbstream

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/schemaver"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// sweepEvery: one MarkProcessed in this many also deletes expired rows, so the table
// stays at about one TTL's worth of keys without a background goroutine.
const sweepEvery = 1000

// IdempotencyStore is R5's processed-events record in the engine's database (table
// kdb_processed: key, expiry in Unix ms), the counterpart of the Redis transport's SET
// NX store: the first record's expiry wins, expired keys read as unseen.
type IdempotencyStore struct {
	eng    *engine.Engine
	prefix string
	now    func() time.Time
	n      atomic.Int64
}

// NewIdempotencyStore creates the table if needed and returns a store whose keys are
// prefix + key.
func NewIdempotencyStore(ctx context.Context, eng *engine.Engine, prefix string) (*IdempotencyStore, error) {
	if err := eng.Ready(ctx); err != nil {
		return nil, classify(err)
	}
	ddl := `CREATE TABLE IF NOT EXISTS kdb_processed (key TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)`
	if err := schemaver.Apply(ctx, eng.DB(), schemaver.Set{Name: "kdbstream.idempotency", Statements: []string{ddl}}); err != nil {
		return nil, classify(err)
	}
	return &IdempotencyStore{eng: eng, prefix: prefix, now: time.Now}, nil
}

// Seen reports whether key was marked processed and has not expired.
func (s *IdempotencyStore) Seen(ctx context.Context, key string) (bool, error) {
	var n int
	err := s.eng.DB().QueryRowContext(ctx, s.eng.Rebind(`SELECT COUNT(*) FROM kdb_processed WHERE key = ? AND expires_at > ?`),
		s.prefix+key, s.now().UnixMilli()).Scan(&n)
	return n > 0, classify(err)
}

// MarkProcessed records key for ttl (0 means hub.DefaultIdempotencyTTL). An expired
// record is replaced; a live one keeps its expiry.
func (s *IdempotencyStore) MarkProcessed(ctx context.Context, key string, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = hub.DefaultIdempotencyTTL
	}
	now := s.now().UnixMilli()
	_, err := s.eng.DB().ExecContext(ctx, s.eng.Rebind(`INSERT INTO kdb_processed (key, expires_at) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE kdb_processed.expires_at <= ?`),
		s.prefix+key, now+ttl.Milliseconds(), now)
	if err == nil && s.n.Add(1)%sweepEvery == 0 {
		_, err = s.eng.DB().ExecContext(ctx, s.eng.Rebind(`DELETE FROM kdb_processed WHERE expires_at <= ?`), now)
	}
	return classify(err)
}

var _ hub.IdempotencyStore = (*IdempotencyStore)(nil)
