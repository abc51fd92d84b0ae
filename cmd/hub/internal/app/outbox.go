package app

import (
	"context"

	"github.com/koder/eventhub/outbox"
)

// openOutbox builds the outbox on the store's ledger, registering its relay worker; the
// ledger starts with the webhook queue once every module is open. The hub needs the
// outbox at hub.New, before any transport is open: the relay finds each row's
// transport in dest, where Start registers every outbox route as it forwards it.
func openOutbox(ctx context.Context, a *App, dest *outbox.Destinations) (*outbox.Outbox, error) {
	l, err := a.rt.Ledger(ctx)
	if err != nil {
		return nil, err
	}
	return outbox.New(l, a.plan.File.Config.Outbox, dest.Lookup)
}
