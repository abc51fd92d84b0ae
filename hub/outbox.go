package hub

import (
	"context"

	"github.com/koder/eventhub/cloudevent"
)

// OutboxItem is one row of the transactional outbox: an event bound for one named
// destination (O1: one row per destination).
type OutboxItem struct {
	Destination string
	Event       *cloudevent.Event
}

// Outbox stores events durably before the operation that produced them continues (O1).
// The outbox package implements it on River; the hub only calls it, so hub never imports
// a database driver.
//
// EnqueueTx writes the rows in the caller's transaction (O4): tx is a pgx.Tx or a
// *sql.Tx; any other type is an InvalidArgument error. Enqueue writes them in a
// transaction of its own. Both fail (and the caller's operation must fail) when the rows
// cannot be stored.
type Outbox interface {
	Enqueue(ctx context.Context, items []OutboxItem) error
	EnqueueTx(ctx context.Context, tx any, items []OutboxItem) error
}
