package kdbstream

import (
	"context"
	"database/sql"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// ShareLedger lets SendTx append in l's transactions. On SQLite l must be the ledger
// whose handle the engine shares (engine.Config.DB = l.DB()); on PostgreSQL the ledger
// whose pool reaches the engine's database and schema (engine.SameDatabase: the hub's
// store puts both in one schema). Otherwise, or when that cannot be checked, the call
// changes nothing and the outbox keeps relaying this transport's events through rows.
// Call it before the transport is used.
func (t *Transport) ShareLedger(l *ledger.Ledger) {
	if l == nil {
		return
	}
	switch l.Backend() {
	case ledger.SQLite:
		if t.eng.SharesDB(l.DB()) {
			t.ledger = l
		}
	case ledger.Postgres:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		same, err := t.eng.SameDatabase(ctx, l.Pool())
		if err != nil {
			t.cfg.Logger.Warn("kdbstream: cannot tell whether the ledger's database is the stream's; relaying through outbox rows", "error", err)
		}
		if same {
			t.ledger = l
		}
	}
}

// LocksRowsUntilCommit reports whether SendTx holds row locks until the transaction
// ends (on PostgreSQL, each stream's row): the outbox then calls it after its other
// writes (outbox.RowLocker).
func (t *Transport) LocksRowsUntilCommit() bool { return t.eng.Postgres() }

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
	// The ledger's InTx gives a *sql.Tx on SQLite, a pgx.Tx on PostgreSQL; any other
	// transaction is not one whose commit the ledger reports (AfterCommit below).
	var appendTx func(adds []engine.Add) ([]engine.AddResult, func(), error)
	switch x := tx.(type) {
	case *sql.Tx:
		if x != nil {
			appendTx = func(adds []engine.Add) ([]engine.AddResult, func(), error) { return t.eng.AppendTx(ctx, x, adds) }
		}
	case pgx.Tx:
		appendTx = func(adds []engine.Add) ([]engine.AddResult, func(), error) { return t.eng.AppendPgTx(ctx, x, adds) }
	}
	if t.ledger == nil || appendTx == nil {
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
	res, committed, err := appendTx(adds)
	if err = classify(firstErr(res, err)); err != nil {
		t.record(ctx, batch, adds, err)
		return err
	}
	return nil
}
