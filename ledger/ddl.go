package ledger

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// ddlLockKey is the advisory lock key that serialises the hub's own DDL in a schema.
func ddlLockKey(schema string) string { return "eventhub.ddl." + schema }

// CreateTables runs DDL statements (CREATE TABLE / INDEX IF NOT EXISTS, CREATE OR
// REPLACE FUNCTION, and what must commit with them) so that several hub processes
// starting at once on one database do not trip over each other.
// PostgreSQL's IF NOT EXISTS is not safe under concurrency: two sessions creating the
// same table both pass the check and the second fails with a unique violation on
// pg_class or pg_type. On PostgreSQL the statements therefore run in one transaction
// holding a transaction-level advisory lock on the schema's key (released at commit,
// also if the process dies); on SQLite they run as they are (a file has one writer, and
// the hub holds the file's lock).
func (l *Ledger) CreateTables(ctx context.Context, stmts ...string) error {
	if l.backend != Postgres {
		for _, q := range stmts {
			if _, err := l.db.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}
	return pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", ddlLockKey(l.cfg.Schema)); err != nil {
			return err
		}
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}
