package app

import (
	"context"
	"errors"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/hub"
)

// outboxRunner owns the outbox and its relay.
type outboxRunner struct {
	outbox hub.Outbox
}

func openOutbox(ctx context.Context, a *App) (*outboxRunner, error) {
	return nil, errors.New("outbox delivery is not available in this build")
}

func (o *outboxRunner) start(ctx context.Context, a *App) error { return nil }
func (o *outboxRunner) stop(ctx context.Context) error          { return nil }
func (o *outboxRunner) ops() ops.Outbox                         { return nil }
