// Package flight shares one read among the callers that ask for the same key at the
// same time, as golang.org/x/sync/singleflight does, with the two rules the hub's
// cached reads (webhook endpoints and breakers, API keys) need on top of it: a caller
// whose context ends stops waiting at once, and the read itself runs detached from any
// one caller's cancellation but bounded by a timeout of its own.
package flight

import (
	"context"
	"time"

	"golang.org/x/sync/singleflight"
)

// Do runs read for key once among the callers that ask at the same time and gives
// each of them its result. The read gets a context with the first caller's values but
// not its cancellation (it serves every waiter, not only that one) and ends after
// timeout (a read stuck on the database must not hold every later caller of the key).
// A caller whose ctx ends gets ctx's error; the read goes on for the others.
func Do[T any](ctx context.Context, g *singleflight.Group, key string, timeout time.Duration, read func(context.Context) (T, error)) (T, error) {
	ch := g.DoChan(key, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		return read(ctx)
	})
	var zero T
	select {
	case r := <-ch:
		if r.Err != nil {
			return zero, r.Err
		}
		return r.Val.(T), nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}
