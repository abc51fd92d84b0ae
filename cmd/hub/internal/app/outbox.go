package app

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/cmd/hub/internal/shared"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/outbox"
)

// outboxRunner owns the outbox: rows in the shared ledger, relayed by its workers to the
// transport named by each row's destination (RouteName).
type outboxRunner struct {
	outbox *outbox.Outbox
}

// openOutbox builds the outbox on the shared ledger with a relay for every outbox route.
// The ledger starts later, with the webhook queue, once everything is registered.
func openOutbox(ctx context.Context, a *App) (*outboxRunner, error) {
	l, err := shared.Ledger(ctx, a.rt)
	if err != nil {
		return nil, err
	}
	dest := map[string]hub.Transport{}
	for _, r := range a.plan.File.Config.Routes {
		if r.Delivery != config.DeliveryOutbox {
			continue
		}
		for _, to := range r.To {
			dest[RouteName(to, r.Pattern)] = a.transport(to)
		}
	}
	ob, err := outbox.New(l, a.plan.File.Config.Outbox, outbox.MapLookup(dest))
	if err != nil {
		return nil, err
	}
	return &outboxRunner{outbox: ob}, nil
}

// start and stop are the ledger's (shared with webhooks): the app starts and stops it.
func (o *outboxRunner) start(ctx context.Context, a *App) error { return nil }
func (o *outboxRunner) stop(ctx context.Context) error          { return nil }

func (o *outboxRunner) ops() ops.Outbox { return outboxOps{o.outbox} }

type outboxOps struct{ o *outbox.Outbox }

func (x outboxOps) Counts(ctx context.Context) (any, error) {
	st, err := x.o.Stats(ctx)
	if st == nil {
		st = []outbox.DestinationStats{}
	}
	return st, err
}

func (x outboxOps) Dead(ctx context.Context, destination string, limit int) (any, error) {
	rows, err := x.o.Dead(ctx, outbox.DeadQuery{Destination: destination, Limit: limit})
	if rows == nil {
		rows = []outbox.DeadRow{}
	}
	return rows, err
}

func (x outboxOps) Resend(ctx context.Context, body json.RawMessage) (any, error) {
	var b struct {
		IDs         []json.Number `json:"ids"`
		Destination string        `json:"destination"`
		All         bool          `json:"all"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, hub.Errorf(hub.InvalidArgument, "body: %v", err)
	}
	if b.All {
		n, err := x.o.ResendDead(ctx, b.Destination)
		return map[string]int{"resent": n}, err
	}
	if len(b.IDs) == 0 {
		return nil, hub.Errorf(hub.InvalidArgument, `give "ids" or "all": true`)
	}
	n := 0
	var errs []error
	for _, s := range b.IDs {
		id, err := strconv.ParseInt(string(s), 10, 64)
		if err == nil {
			err = x.o.Resend(ctx, id)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return map[string]int{"resent": n}, errors.Join(errs...)
}
