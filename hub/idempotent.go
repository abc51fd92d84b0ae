package hub

import (
	"context"

	"github.com/koder/eventhub/cloudevent"
)

// Idempotent wraps h so that an event id already processed within scope is skipped
// (R5, E3). The key is "<scope>:<event id>"; scope is usually the consumer group, so two
// groups each process every event once.
//
// The id is marked only after h succeeded: an event whose handler failed is run again
// on redelivery, and a crash between success and the mark means one more run, never a
// lost event (at-least-once). A store error fails the delivery, so the transport
// redelivers rather than risk a second run while the store is down, or a skip.
func Idempotent(store IdempotencyStore, scope string, h Handler) Handler {
	return func(ctx context.Context, ev *cloudevent.Event) error {
		key := scope + ":" + ev.ID
		seen, err := store.Seen(ctx, key)
		if err != nil {
			return err
		}
		if seen {
			return nil
		}
		if err := h(ctx, ev); err != nil {
			return err
		}
		return store.MarkProcessed(ctx, key, DefaultIdempotencyTTL)
	}
}
