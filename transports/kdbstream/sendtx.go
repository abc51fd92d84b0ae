package kdbstream

import (
	"context"
	"database/sql"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/ledger"
)

// ShareLedger lets SendTx append in l's transactions. l must be the ledger whose
// SQLite handle the engine shares (engine.Config.DB = l.DB()); otherwise the call
// changes nothing and the outbox keeps relaying this transport's events through rows.
// Call it before the transport is used.
func (t *Transport) ShareLedger(l *ledger.Ledger) {
	if l != nil && l.Backend() == ledger.SQLite && t.eng.SharesDB(l.DB()) {
		t.ledger = l
	}
}

// Ledger returns the ledger set by ShareLedger, or nil: an outbox on that ledger calls
// SendTx in its enqueue transaction instead of writing a row (outbox.TxSender).
func (t *Transport) Ledger() *ledger.Ledger { return t.ledger }

// SendTx appends the batch's entries in tx, a transaction of the shared ledger's
// InTx: one durable write per event, with the outbox's other records, instead of an
// outbox row that a relay turns into the entries later. The entries commit or roll
// back with tx; after the commit the blocked readers are woken, the R8 log and
// counters recorded and any age trim run, as after Send.
//
// A transaction the ledger cannot report the commit of (not begun by its InTx) gets
// ledger.ErrNoCommitHook before anything is written: the caller relays the events
// through rows instead. Any other error means tx must be rolled back.
func (t *Transport) SendTx(ctx context.Context, tx any, batch []*cloudevent.Event) error {
	if err := t.refuse(ctx); err != nil || len(batch) == 0 {
		return err
	}
	stx, ok := tx.(*sql.Tx)
	if t.ledger == nil || !ok || stx == nil {
		return ledger.ErrNoCommitHook
	}
	adds, aged, err := t.adds(ctx, batch)
	if err != nil {
		return err
	}
	var committed func()
	if !t.ledger.AfterCommit(tx, func() {
		committed()
		t.record(ctx, batch, adds, nil)
		if aged {
			t.trimByAge(ctx, adds)
		}
	}) {
		return ledger.ErrNoCommitHook
	}
	res, committed, err := t.eng.AppendTx(ctx, stx, adds)
	if err = classify(firstErr(res, err)); err != nil {
		t.record(ctx, batch, adds, err)
		return err
	}
	return nil
}
