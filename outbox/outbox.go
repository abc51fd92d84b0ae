package outbox

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// Lookup finds a destination's transport by the name the rows carry. It is called for
// every row a relay sends and must be safe for concurrent use.
type Lookup func(name string) (hub.Transport, bool)

// MapLookup is a Lookup over a fixed map.
func MapLookup(m map[string]hub.Transport) Lookup {
	return func(name string) (hub.Transport, bool) {
		t, ok := m[name]
		return t, ok
	}
}

// Outbox stores events as River jobs (the rows) and, when given transports, relays
// them. It implements hub.Outbox.
type Outbox struct {
	l      *ledger.Ledger
	cfg    Config
	lookup Lookup // nil: only rows (the process relays nothing)
}

// New returns an Outbox on l. With a non-nil lookup it also registers the relay: the
// worker and cfg.Workers slots on cfg.Queue, which run once the ledger is started
// (l.Start). With a nil lookup the process only enqueues and other processes relay.
//
// The ledger is shared (the webhook transport uses it too), so the caller starts and
// closes it, after registering everything on it.
func New(l *ledger.Ledger, cfg Config, lookup Lookup) (*Outbox, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, hub.Wrap(hub.InvalidArgument, err)
	}
	o := &Outbox{l: l, cfg: cfg, lookup: lookup}
	if cfg.CompletedRetention > 0 {
		if err := l.RetainCompleted(cfg.Queue, cfg.CompletedRetention); err != nil {
			return nil, hub.Wrap(hub.InvalidArgument, err)
		}
	}
	if lookup != nil {
		if err := river.AddWorkerSafely(l.Workers(), &relay{cfg: &o.cfg, lookup: lookup}); err != nil {
			return nil, hub.Wrap(hub.AlreadyExists, err)
		}
		if err := l.AddQueue(cfg.Queue, cfg.Workers); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Enqueue stores the rows in a transaction of their own and returns once they are
// committed (O1). An error means nothing was stored. Destinations in the ledger's
// database get their records in the same transaction instead of a row (direct.go).
func (o *Outbox) Enqueue(ctx context.Context, items []hub.OutboxItem) error {
	if len(items) == 0 {
		return nil
	}
	if _, err := o.insertParams(items); err != nil {
		return err // checked before any transaction begins
	}
	return classify("outbox: enqueue", o.l.InTx(ctx, func(tx any) error {
		return o.EnqueueTx(ctx, tx, items)
	}))
}

// EnqueueTx stores the rows in the caller's transaction (O4): they are relayed only if
// it commits, and never if it rolls back. tx is a pgx.Tx or *sql.Tx (see
// ledger for which fits which backend). An error means the rows could not be
// written; the caller must fail (roll back) its operation (O1). On PostgreSQL a failed
// statement also aborts the caller's transaction. Destinations in the ledger's
// database get their records in tx instead of a row (direct.go).
func (o *Outbox) EnqueueTx(ctx context.Context, tx any, items []hub.OutboxItem) error {
	if len(items) == 0 {
		return nil
	}
	p := o.planDirect(items)
	if err := o.insertRows(ctx, tx, p.rows); err != nil {
		return err
	}
	rows, err := o.sendDirect(ctx, tx, items, p)
	if err != nil {
		return err
	}
	return o.insertRows(ctx, tx, rows)
}

// insertRows writes the rows of items in tx.
func (o *Outbox) insertRows(ctx context.Context, tx any, items []hub.OutboxItem) error {
	if len(items) == 0 {
		return nil
	}
	params, err := o.insertParams(items)
	if err != nil {
		return err
	}
	_, err = o.l.InsertManyTx(ctx, tx, params)
	return classify("outbox: enqueue in transaction", err)
}

// Ledger returns the ledger the rows live in.
func (o *Outbox) Ledger() *ledger.Ledger { return o.l }

var _ hub.Outbox = (*Outbox)(nil)
