package webhook

import (
	"context"
	"database/sql"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// SendTx is Send inside the caller's transaction tx on the transport's ledger (a
// pgx.Tx or *sql.Tx, as ledger.InsertManyTx takes): the deliveries exist if and only
// if tx commits. It lets a producer whose rows live in the same database (the outbox's
// caller, the hub's ingress) write the deliveries themselves in its own transaction,
// one durable write per event, instead of an outbox row that a relay turns into them
// later. Everything after the insert is the same as for Send: one delivery per
// (endpoint, event) whatever its state (H1), the worker's retries, breaker,
// dead-letter and resend.
//
// Endpoints are matched as in Send (H6): the acceptance time comes from the context
// (hub.AcceptedAtFrom), else it is now, the moment the caller's transaction writes
// the event. Everything is read through tx, on its connection: on SQLite it holds the
// ledger's only one, and on PostgreSQL transactions that each needed a second
// connection could hold the whole pool waiting for it.
//
// An error means nothing usable was written: the caller must roll back (on
// PostgreSQL a failed statement has aborted tx already).
func (t *Transport) SendTx(ctx context.Context, tx any, batch []*cloudevent.Event) error {
	if t.closed.Load() {
		return hub.Errorf(hub.FailedPrecondition, "webhook: send after Close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(batch) == 0 {
		return nil
	}
	if stx, ok := tx.(*sql.Tx); ok && stx == nil {
		return hub.Errorf(hub.InvalidArgument, "webhook: SendTx with a nil *sql.Tx")
	}
	eps, err := t.st.listEndpointsOn(ctx, tx, endpointQuery{enabledOnly: true})
	if err != nil {
		return err
	}
	params, refused, err := t.fanOut(ctx, tx, eps, batch)
	if err != nil {
		return err
	}
	if len(params) > 0 {
		if err := t.insertDeliveries(ctx, tx, params); err != nil {
			return err
		}
	}
	// Over a cap the caller rolls back (see above), so the request is refused whole.
	return overQueued(refused)
}

// Ledger returns the ledger the deliveries live in: a caller whose transaction is on
// the same ledger may use SendTx.
func (t *Transport) Ledger() *ledger.Ledger { return t.l }
