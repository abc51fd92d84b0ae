package webhook

import (
	"context"

	"golang.org/x/sync/singleflight"
)

// readOnce runs read for key once among the callers that ask at the same time and
// gives each of them its result: when an endpoint's cached copy (or its breaker's) is
// missing, as at start or after an edit, every worker slot delivering to it would
// otherwise read the same row at once. A caller whose ctx ends stops waiting; the read
// goes on for the others, with the first caller's values but not its cancellation, and
// for at most refreshTimeout (a read stuck on the database must not hold every later
// caller of the key).
func readOnce[T any](ctx context.Context, g *singleflight.Group, key string, read func(context.Context) (T, error)) (T, error) {
	ch := g.DoChan(key, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		return read(ctx)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			var zero T
			return zero, r.Err
		}
		return r.Val.(T), nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
