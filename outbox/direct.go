package outbox

import (
	"context"
	"errors"
	"slices"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// TxSender is a destination whose own records live in a ledger's database (the
// webhook transport's deliveries, kdbstream's entries in the ledger's SQLite file or
// PostgreSQL schema): it can write them in the caller's transaction. SendTx may answer
// ledger.ErrNoCommitHook, having written nothing, when it needs InTx's commit
// callbacks and tx is a caller's own: those events then get rows. For
// such a destination on the outbox's own ledger, Enqueue and EnqueueTx call SendTx in
// their transaction instead of writing a row: one durable write per event instead of
// a row, its relay, and then the destination's record. The guarantees stay those of
// the row: the records exist if and only if the transaction commits (O1, O4), and
// whatever the destination does with them afterwards (retries, dead-letter, resend)
// is its own. Destinations outside the database still get rows.
type TxSender interface {
	SendTx(ctx context.Context, tx any, batch []*cloudevent.Event) error
	Ledger() *ledger.Ledger
}

// RowLocker is a TxSender whose SendTx locks rows until the transaction ends (a
// kdbstream transport on PostgreSQL locks each stream's row from its append to the
// commit). EnqueueTx calls such senders last, after the rows and the other
// destinations, so concurrent transactions to the same stream wait on the lock for as
// little of theirs as possible, and in destination-name order, so two transactions
// never take two of them in opposite orders.
type RowLocker interface {
	LocksRowsUntilCommit() bool
}

// directPlan is what EnqueueTx does with a batch: the rows of destinations outside the
// ledger's database, and the events of each direct destination, lock-taking ones last.
type directPlan struct {
	rows   []hub.OutboxItem
	order  []string // direct destinations, in the order SendTx is called
	events map[string][]*cloudevent.Event
	sender map[string]TxSender
}

// planDirect splits items into rows and direct destinations.
func (o *Outbox) planDirect(items []hub.OutboxItem) directPlan {
	if o.lookup == nil || o.cfg.RelayAll {
		return directPlan{rows: items}
	}
	var p directPlan
	var locking []string
	for _, it := range items {
		ts, ok := o.directSender(it.Destination)
		if !ok || it.Event == nil {
			p.rows = append(p.rows, it)
			continue
		}
		if p.events == nil {
			p.events, p.sender = map[string][]*cloudevent.Event{}, map[string]TxSender{}
		}
		if _, seen := p.events[it.Destination]; !seen {
			if rl, ok := ts.(RowLocker); ok && rl.LocksRowsUntilCommit() {
				locking = append(locking, it.Destination)
			} else {
				p.order = append(p.order, it.Destination)
			}
			p.sender[it.Destination] = ts
		}
		p.events[it.Destination] = append(p.events[it.Destination], it.Event)
	}
	// One order for every transaction whatever the route's: two lock-takers written in
	// opposite orders by two transactions could deadlock.
	slices.Sort(locking)
	p.order = append(p.order, locking...)
	return p
}

// sendDirect hands the events of p's direct destinations to their SendTx in tx, one
// call per destination with its events in order, and returns the items that need a
// row after all (a destination that cannot join a caller's own transaction).
func (o *Outbox) sendDirect(ctx context.Context, tx any, items []hub.OutboxItem, p directPlan) ([]hub.OutboxItem, error) {
	var rows []hub.OutboxItem
	for _, name := range p.order {
		end := hub.TraceSendInTx(ctx, name, p.events[name])
		err := p.sender[name].SendTx(ctx, tx, p.events[name])
		if errors.Is(err, ledger.ErrNoCommitHook) {
			end(nil) // nothing written here: the relay's attempt gets its own span
			// The destination cannot join this transaction (a caller's own, whose
			// commit it would not see): its events get rows after all.
			for _, it := range items {
				if it.Destination == name && it.Event != nil {
					rows = append(rows, it)
				}
			}
			continue
		}
		end(err)
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func (o *Outbox) directSender(name string) (TxSender, bool) {
	t, ok := o.lookup(name)
	if !ok {
		return nil, false
	}
	ts, ok := t.(TxSender)
	if !ok || ts.Ledger() != o.l {
		return nil, false
	}
	return ts, true
}
