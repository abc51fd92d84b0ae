package kdbstream

import (
	"context"
	"errors"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// classify gives every error leaving the package a hub code. The table from database
// errors to codes lives in the engine (engine.dbCode: SQLITE_BUSY/IOERR and PostgreSQL
// class 08/57P0x/40001 -> Unavailable, disk full -> ResourceExhausted, corruption ->
// Internal); command replies carry their own code (NOGROUP -> NotFound, BUSYGROUP ->
// AlreadyExists, bad ids -> InvalidArgument, closed engine -> FailedPrecondition).
// Context errors pass unwrapped.
func classify(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var he *hub.Error
	if errors.As(err, &he) {
		return err
	}
	var ee *engine.Error
	if errors.As(err, &ee) {
		return hub.Wrap(hub.ErrorCode(ee.HubCode()), err)
	}
	return hub.Wrap(hub.Unknown, err)
}
