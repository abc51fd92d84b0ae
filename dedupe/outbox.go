package dedupe

import (
	"context"
	"sync"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/outbox"
)

// claim is what Admit hands its publish through the context: the fresh keys, and which
// of them a transaction recorded already.
type claim struct {
	store *Store
	keys  []hub.EventKey
	fresh []int
	ttl   time.Duration

	mu       sync.Mutex
	recorded []bool // by index into keys
}

type claimKey struct{}

func withClaim(ctx context.Context, c *claim) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

func claimFrom(ctx context.Context) *claim {
	c, _ := ctx.Value(claimKey{}).(*claim)
	return c
}

// among returns the fresh, unrecorded keys whose events are in items (one row per
// destination: an event may appear several times).
func (c *claim) among(items []hub.OutboxItem) []int {
	type tid struct{ tenant, id string }
	in := make(map[tid]bool, len(items))
	for _, it := range items {
		in[tid{it.Event.TenantID(), it.Event.ID}] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, i := range c.fresh {
		if !c.recorded[i] && in[tid{c.keys[i].Tenant, c.keys[i].ID}] {
			out = append(out, i)
		}
	}
	return out
}

func (c *claim) markRecorded(idx []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, i := range idx {
		c.recorded[i] = true
	}
}

func (c *claim) unrecorded() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, i := range c.fresh {
		if !c.recorded[i] {
			out = append(out, i)
		}
	}
	return out
}

// raceError: one of the claimed ids is recorded already (by a concurrent request after
// Admit's lookup, or, with OutboxOnly, by an earlier one); the transaction stored
// nothing. Admit looks the batch up and judges it again.
type raceError struct{}

func (*raceError) Error() string {
	return "dedupe: one of these event ids is recorded already"
}

// HubCode is Unavailable: the request may be retried (Admit does so itself first).
func (*raceError) HubCode() int { return int(hub.Unavailable) }

// Outbox is an outbox whose Enqueue also records the ids a Store admitted, in the same
// transaction as the rows (the package doc says why). Give it to hub.WithOutbox in
// place of the outbox itself; without a claim in the context (any publish not made by
// Store.Admit, or by a Store on another database) Enqueue is the outbox's own.
type Outbox struct {
	inner *outbox.Outbox
}

// WrapOutbox returns o with the window's records written in its transactions.
func WrapOutbox(o *outbox.Outbox) *Outbox { return &Outbox{inner: o} }

// Enqueue stores the rows and, when Store.Admit is publishing, records the admitted ids
// of their events in the same transaction. If another request recorded one of them
// first, nothing is stored and Admit judges the request again.
func (o *Outbox) Enqueue(ctx context.Context, items []hub.OutboxItem) error {
	c := claimFrom(ctx)
	if c == nil || c.store.l != o.inner.Ledger() {
		return o.inner.Enqueue(ctx, items)
	}
	idx := c.among(items)
	if len(idx) == 0 {
		return o.inner.Enqueue(ctx, items)
	}
	err := c.store.inTx(ctx, func(tx any) error {
		n, err := c.store.upsert(ctx, tx, c.keys, idx, c.store.now(), c.ttl)
		if err != nil {
			return err
		}
		if n < int64(len(idx)) {
			return &raceError{}
		}
		return o.inner.EnqueueTx(ctx, tx, items)
	})
	if err != nil {
		return err
	}
	c.markRecorded(idx)
	return nil
}

// EnqueueTx is the outbox's own: the caller's transaction decides, and the caller
// records what it needs in it.
func (o *Outbox) EnqueueTx(ctx context.Context, tx any, items []hub.OutboxItem) error {
	return o.inner.EnqueueTx(ctx, tx, items)
}

var _ hub.Outbox = (*Outbox)(nil)
