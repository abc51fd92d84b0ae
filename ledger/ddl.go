package ledger

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/internal/schemaver"
)

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
	return pgx.BeginTxFunc(ctx, l.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, schemaver.Lock); err != nil {
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

// Schema is a package's DDL of one job for ApplySchema (internal/schemaver.Set).
type Schema struct {
	// Name is the set's name in the record, e.g. "webhook.tables".
	Name string
	// Statements are idempotent DDL; their text is the set's version.
	Statements []string
	// Missing, when set, is a query returning one boolean: whether the objects whose
	// data Backfill fills are missing (a table an upgrade adds). Asked before the
	// statements run and again under the lock.
	Missing string
	// Backfill runs after the statements, in their transaction, when Missing said
	// true: what an upgrade needs once, such as filling a new table from an existing
	// one. Not part of the version.
	Backfill []string
}

// ApplySchema runs s's statements as CreateTables does, recorded under s.Name in the
// schema's table of applied DDL (eventhub_schema, one row per version): on PostgreSQL
// a process that finds this version recorded runs no DDL at all. PostgreSQL checks
// privileges before existence, so without the record a role that does not own the
// tables could not start even when nothing would change; with it, the owner applies a
// version's DDL once (`hub migrate schema`, or the first start as the owner) and a
// role with only SELECT, INSERT, UPDATE and DELETE runs it. When such a role meets a
// version not applied yet, the error says so (FailedPrecondition). Objects s.Missing
// reports missing run the set, with its backfill, whatever the record says.
// internal/schemaver has the details. On SQLite the statements run at every call.
func (l *Ledger) ApplySchema(ctx context.Context, s Schema) error {
	return schemaver.Apply(ctx, l.db, schemaver.Set(s))
}
