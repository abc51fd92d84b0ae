package ledger

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/internal/schemaver"
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
	return l.ddl(ctx, stmts, nil)
}

// ApplySchema runs stmts as CreateTables does, recorded under name (a package's
// name for its set, e.g. "webhook.tables") in the schema's table of applied DDL
// (eventhub_schema): on PostgreSQL a process that finds this very set recorded runs
// no DDL at all. PostgreSQL checks privileges before existence, so without the record
// a role that does not own the tables could not start even when nothing would
// change; with it, the owner applies a version's DDL once (`hub migrate schema`, or
// the first start as the owner) and a role with only SELECT, INSERT, UPDATE and DELETE
// runs it. When such a role meets statements not yet applied, the error says so
// (FailedPrecondition). backfill runs after stmts in their transaction, whenever they
// are applied, and is not part of the set's identity: the data statements an upgrade
// needs once (filling a new table from an existing one). On SQLite it is
// CreateTables of stmts then backfill.
func (l *Ledger) ApplySchema(ctx context.Context, name string, stmts []string, backfill ...string) error {
	all := append(append([]string{}, stmts...), backfill...)
	if l.backend != Postgres {
		return l.CreateTables(ctx, all...)
	}
	digest := schemaver.Digest(stmts)
	if schemaver.Current(ctx, l.DB(), name, digest) {
		return nil
	}
	return schemaver.Denied(name, l.ddl(ctx, all, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, schemaver.CreateTable); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schemaver.Record, name, digest, schemaver.Now())
		return err
	}))
}

// ddl runs stmts, then then (when set), in one transaction under the schema's DDL lock
// on PostgreSQL; on SQLite stmts one by one.
func (l *Ledger) ddl(ctx context.Context, stmts []string, then func(pgx.Tx) error) error {
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
		if then != nil {
			return then(tx)
		}
		return nil
	})
}
