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
	return pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
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

// ApplySchema runs stmts as CreateTables does, recorded under name (a package's
// name for its set, e.g. "webhook.tables") in the schema's table of applied DDL
// (eventhub_schema): on PostgreSQL a process that finds this very set recorded runs
// no DDL at all. PostgreSQL checks privileges before existence, so without the record
// a role that does not own the tables could not start even when nothing would
// change; with it, the owner applies a version's DDL once (`hub migrate schema`, or
// the first start as the owner) and a role with only SELECT, INSERT, UPDATE and DELETE
// runs it. When such a role meets statements not yet applied, the error says so
// (FailedPrecondition). backfill runs after stmts in their transaction and is not
// part of the set's identity: the data statements an upgrade needs once (filling a new
// table from an existing one); pass it only when the objects were found missing, and
// the set then runs whatever the record says. internal/schemaver has the details. On
// SQLite it is CreateTables of stmts then backfill.
func (l *Ledger) ApplySchema(ctx context.Context, name string, stmts []string, backfill ...string) error {
	if l.backend != Postgres {
		return l.CreateTables(ctx, append(append([]string{}, stmts...), backfill...)...)
	}
	return schemaver.Apply(ctx, l.db, name, stmts, backfill...)
}
