package outbox

import (
	"context"
	"errors"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// TxSender is a destination whose own records live in a ledger's database (the
// webhook transport's deliveries, kdbstream's entries in the ledger's SQLite file or
// PostgreSQL schema): it
// can write them in the caller's transaction. SendTx may answer
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

// sendDirect hands the items of direct destinations to their SendTx in tx, one call
// per destination with its events in order, and returns the items that still need a
// row.
func (o *Outbox) sendDirect(ctx context.Context, tx any, items []hub.OutboxItem) ([]hub.OutboxItem, error) {
	if o.lookup == nil || o.cfg.RelayAll {
		return items, nil
	}
	var (
		rows   []hub.OutboxItem
		order  []string
		direct map[string][]*cloudevent.Event
		sender map[string]TxSender
	)
	for _, it := range items {
		ts, ok := o.directSender(it.Destination)
		if !ok || it.Event == nil {
			rows = append(rows, it)
			continue
		}
		if direct == nil {
			direct, sender = map[string][]*cloudevent.Event{}, map[string]TxSender{}
		}
		if _, seen := direct[it.Destination]; !seen {
			order = append(order, it.Destination)
			sender[it.Destination] = ts
		}
		direct[it.Destination] = append(direct[it.Destination], it.Event)
	}
	for _, name := range order {
		end := hub.TraceSendInTx(ctx, name, direct[name])
		err := sender[name].SendTx(ctx, tx, direct[name])
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
