package hub

import (
	"context"
	"time"
)

// DefaultIdempotencyTTL is R5's processed-events window.
const DefaultIdempotencyTTL = 24 * time.Hour

// IdempotencyStore records which event ids a consumer group has processed (R5, E3).
//
// Consumers call Seen before running a handler and skip the event when it reports true;
// they call MarkProcessed only after the handler succeeded, so a crash between the two
// leads to a second run (at-least-once), never to a lost event. Keys are scoped by the
// caller (typically "<group>:<event id>").
type IdempotencyStore interface {
	Seen(ctx context.Context, key string) (bool, error)
	MarkProcessed(ctx context.Context, key string, ttl time.Duration) error
}
