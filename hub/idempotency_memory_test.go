package hub

import (
	"context"
	"testing"
	"time"
)

func TestMemoryIdempotencyStoreExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := NewMemoryIdempotencyStore()
	s.now = func() time.Time { return now }
	if err := s.MarkProcessed(ctx, "short", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkProcessed(ctx, "default", 0); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if seen, _ := s.Seen(ctx, "short"); seen {
		t.Fatal("key seen at its expiry")
	}
	if seen, _ := s.Seen(ctx, "default"); !seen {
		t.Fatal("key with the default TTL (24h) forgotten after a minute")
	}
	now = now.Add(DefaultIdempotencyTTL)
	if err := s.MarkProcessed(ctx, "new", time.Hour); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d after the sweep, want 1 (expired records dropped)", s.Len())
	}
}
