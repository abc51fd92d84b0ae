// Package dbrow holds the conventions the hub's own SQL tables share: how their DDL
// runs when several replicas start at once and no ledger is at hand to serialise it
// (ledger.CreateTables does where one is: the webhook transport's tables), for the auth
// tables and kdbstream's on PostgreSQL; and, for the tables in the ledger's database
// (auth, webhook), times stored as unix microseconds and one classification of
// database errors into hub error codes.
package dbrow

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/koder/eventhub/hub"
)

// ExecDDL runs each statement of ddl, each tried a second time when it fails: replicas
// starting at once on PostgreSQL can collide on the catalog running the same CREATE
// ... IF NOT EXISTS (or CREATE OR REPLACE), and the second try sees the other's
// object. It returns the first try's error of a statement that failed twice.
func ExecDDL(ctx context.Context, db *sql.DB, ddl []string) error {
	for _, q := range ddl {
		if _, err := db.ExecContext(ctx, q); err != nil {
			if _, err2 := db.ExecContext(ctx, q); err2 != nil {
				return err
			}
		}
	}
	return nil
}

// FromMicros reads a time stored as unix microseconds, 0 being unset (the zero time).
func FromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// Err classifies a database error of operation op in package pkg: no rows is
// NotFound, a cancelled context passes through, the rest is Unavailable (the database
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
	return hub.Errorf(hub.Unavailable, "%s: %s: %w", pkg, op, err)
}
