package hub

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// DefaultIdempotencyMaxEntries bounds a MemoryIdempotencyStore.
const DefaultIdempotencyMaxEntries = 100_000

// MemoryIdempotencyStore is an in-process IdempotencyStore: a map of keys with expiry,
// bounded in size. When full, the oldest record is evicted first, so memory stays
// bounded under any load at the price of forgetting the oldest ids early (a duplicate
// of a forgotten id runs its handler again: at-least-once, never a loss). It only
// deduplicates within one process; use a shared store (Redis) across replicas.
// Safe for concurrent use.
type MemoryIdempotencyStore struct {
	mu    sync.Mutex
	max   int
	now   func() time.Time
	items map[string]*list.Element
	order *list.List // of *idemEntry, oldest mark first
}

type idemEntry struct {
	key     string
	expires time.Time
}

// NewMemoryIdempotencyStore returns a store holding at most DefaultIdempotencyMaxEntries
// keys.
func NewMemoryIdempotencyStore() *MemoryIdempotencyStore {
	return NewMemoryIdempotencyStoreSize(DefaultIdempotencyMaxEntries)
}

// NewMemoryIdempotencyStoreSize returns a store holding at most max keys (max < 1 means
// the default).
func NewMemoryIdempotencyStoreSize(max int) *MemoryIdempotencyStore {
	if max < 1 {
		max = DefaultIdempotencyMaxEntries
	}
	return &MemoryIdempotencyStore{max: max, now: time.Now, items: map[string]*list.Element{}, order: list.New()}
}

// Seen reports whether key was marked and has not expired.
func (s *MemoryIdempotencyStore) Seen(ctx context.Context, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.items[key]
	if !ok {
		return false, nil
	}
	if !s.now().Before(el.Value.(*idemEntry).expires) {
		s.remove(el)
		return false, nil
	}
	return true, nil
}

// MarkProcessed records key for ttl (ttl <= 0 means DefaultIdempotencyTTL).
func (s *MemoryIdempotencyStore) MarkProcessed(ctx context.Context, key string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ttl <= 0 {
		ttl = DefaultIdempotencyTTL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if el, ok := s.items[key]; ok {
		s.remove(el)
	}
	s.items[key] = s.order.PushBack(&idemEntry{key: key, expires: now.Add(ttl)})
	// Amortized sweep: drop expired records at the old end, then enforce the bound.
	for el := s.order.Front(); el != nil && !now.Before(el.Value.(*idemEntry).expires); el = s.order.Front() {
		s.remove(el)
	}
	for s.order.Len() > s.max {
		s.remove(s.order.Front())
	}
	return nil
}

// Len returns the number of records held (expired ones not yet swept included).
func (s *MemoryIdempotencyStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}

func (s *MemoryIdempotencyStore) remove(el *list.Element) {
	delete(s.items, el.Value.(*idemEntry).key)
	s.order.Remove(el)
}

var _ IdempotencyStore = (*MemoryIdempotencyStore)(nil)
