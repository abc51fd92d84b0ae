// Package dbrow holds the conventions the hub's own SQL tables in the ledger's
// database share (auth, webhook): times stored as unix microseconds and one
// classification of database errors into hub error codes. Their DDL runs through
// internal/schemaver.
package dbrow

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/koder/eventhub/hub"
)

// FromMicros reads a time stored as unix microseconds, 0 being unset (the zero time).
func FromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// Err classifies a database error of operation op in package pkg: no rows is
// NotFound, a cancelled context and an error classified already pass through, the
// rest is Unavailable (the database
// is the ledger: down or busy, retryable).
func Err(pkg, op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return hub.Errorf(hub.NotFound, "%s: %s: not found", pkg, op)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	var he *hub.Error
	if errors.As(err, &he) {
		return err // classified already (schemaver's FailedPrecondition, say)
	}
	return hub.Errorf(hub.Unavailable, "%s: %s: %w", pkg, op, err)
}
