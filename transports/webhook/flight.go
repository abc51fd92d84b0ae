package webhook

import (
	"context"

	"golang.org/x/sync/singleflight"

	"github.com/koder/eventhub/internal/flight"
)

// readOnce runs read for key once among the callers that ask at the same time and
// gives each of them its result (flight.Do, bounded by refreshTimeout): when an
// endpoint's cached copy (or its breaker's) is missing, as at start or after an edit,
// every worker slot delivering to it would otherwise read the same row at once.
func readOnce[T any](ctx context.Context, g *singleflight.Group, key string, read func(context.Context) (T, error)) (T, error) {
	return flight.Do(ctx, g, key, refreshTimeout, read)
}
