// Package schemaver records which versions of a package's DDL a PostgreSQL schema
// holds, so that a process whose role may not change the schema starts on it.
//
// The hub's packages create their tables with idempotent DDL at start (CREATE TABLE
// / INDEX IF NOT EXISTS, CREATE OR REPLACE FUNCTION). PostgreSQL checks privileges
// before it checks existence: CREATE TABLE IF NOT EXISTS needs CREATE on the schema
// and CREATE INDEX IF NOT EXISTS or CREATE OR REPLACE FUNCTION ownership of the
// table or function, even when nothing would change. A deployment that migrates as
// the tables' owner and runs the hub as a role with only SELECT, INSERT, UPDATE and
// DELETE (least privilege, as platform teams require) could therefore never start.
// Each named set of statements is recorded here with a digest of its text when it
// was applied; a process finding its own digest recorded runs no DDL at all. A new
// version whose statements differ applies them (and needs the owner's privileges,
// which the error then says).
//
// The record keeps every version applied, not only the last: a replica of the
// previous version restarting after the new one migrated (a rolling upgrade, a
// rollback) finds its own digest and runs nothing, rather than running its older DDL
// (an older function body) over the new, or failing for lack of privilege.
//
// River records its migrations the same way (river_migration); this is the same idea
// for the hub's own tables, by digest rather than by numbered migration because each
// package's DDL is already written to be idempotent.
package schemaver

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/koder/eventhub/hub"
)

// createTable creates the record table, in the schema the statements run in (the
// connection's search_path): one row per set and version applied.
const createTable = `CREATE TABLE IF NOT EXISTS eventhub_schema (
	name       TEXT NOT NULL,
	digest     TEXT NOT NULL,
	applied_at BIGINT NOT NULL,
	PRIMARY KEY (name, digest)
)`

const record = `INSERT INTO eventhub_schema (name, digest, applied_at) VALUES ($1, $2, $3)
	ON CONFLICT (name, digest) DO UPDATE SET applied_at = excluded.applied_at`

// Lock is the statement that serialises the hub's DDL in the current schema, in a
// transaction (released at its end, also if the process dies): PostgreSQL's IF NOT
// EXISTS is not safe under concurrency, two sessions creating the same table both
// pass the check and the second fails on the catalog. Every DDL path of the hub takes
// it (Apply, ledger.CreateTables).
const Lock = `SELECT pg_advisory_xact_lock(hashtext('eventhub.ddl.' || current_schema()))`

// Digest identifies a set of statements by their text.
func Digest(stmts []string) string {
	h := sha256.New()
	for _, s := range stmts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// migrationKey marks a context as a migration run's (AsMigration).
type migrationKey struct{}

// AsMigration marks ctx as a migration run's (`hub migrate schema`): what a start only
// warns about (an index this role may not build, a background build that failed)
// fails it, and with force every set runs even when its version is recorded, which
// repairs objects dropped behind the record's back.
func AsMigration(ctx context.Context, force bool) context.Context {
	return context.WithValue(ctx, migrationKey{}, force)
}

// Migration reports whether ctx is a migration run's, and whether it forces every set.
func Migration(ctx context.Context) (migrating, force bool) {
	force, migrating = ctx.Value(migrationKey{}).(bool)
	return migrating, force
}

// querier is a database, a connection or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Current reports whether q's schema records the version digest of the set name. No
// record table yet reads as false; an error reading it (the role may not read it, the
// database is down) is returned, classified.
func Current(ctx context.Context, q querier, name, digest string) (bool, error) {
	var ok bool
	err := q.QueryRowContext(ctx, `SELECT to_regclass('eventhub_schema') IS NOT NULL`).Scan(&ok)
	if err == nil && ok {
		err = q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM eventhub_schema WHERE name = $1 AND digest = $2)`,
			name, digest).Scan(&ok)
	}
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" {
			return false, hub.Errorf(hub.FailedPrecondition,
				"%s: this role may not read the table of applied DDL: grant it SELECT on eventhub_schema: %w", name, err)
		}
		return false, classify(name, "look up the applied DDL", err)
	}
	return ok, nil
}

// classify gives an error of op on the set name its hub code: a role's missing
// privilege (42501: not the owner, no CREATE on the schema) is FailedPrecondition with
// what to do, another class 42 (a statement PostgreSQL rejects) Internal, the context's
// as it is, the rest Unavailable (the database down or busy: retrying can succeed).
func classify(name, op string, err error) error {
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &pe) && pe.Code == "42501":
		return hub.Errorf(hub.FailedPrecondition,
			"%s: this version's tables are not in the schema yet and this role may not create them: "+
				"run `hub migrate schema` (or start this version once) as the tables' owner, "+
				"after which this role starts without DDL: %w", name, err)
	case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "42"):
		return hub.Errorf(hub.Internal, "%s: %s: %w", name, op, err)
	}
	return hub.Errorf(hub.Unavailable, "%s: %s: %w", name, op, err)
}

// Apply runs stmts, then backfill, on db unless the version of stmts is recorded under
// name, and records it, in one transaction under Lock; the record is read again once
// the lock is held (a process that waited for a migration finds it done). backfill is
// what the statements need once when they run (data of an earlier layout to copy) and
// not part of the version's identity; a caller passes it only when it found the
// objects missing, so Apply then runs the set whatever the record says. A transaction
// that fails is tried once more: a process of an earlier version, which took no lock,
// can collide with it on the catalog. Errors are classified (classify).
//
// On SQLite (any db not on pgx), which has no roles and whose file has one writer,
// Apply runs the statements as they are, each tried a second time when it fails.
func Apply(ctx context.Context, db *sql.DB, name string, stmts []string, backfill ...string) error {
	all := append(append([]string{}, stmts...), backfill...)
	if _, pg := db.Driver().(*stdlib.Driver); !pg {
		return execTwice(ctx, db, all)
	}
	digest := Digest(stmts)
	_, force := Migration(ctx)
	skip := !force && len(backfill) == 0
	if skip {
		if ok, err := Current(ctx, db, name, digest); err != nil || ok {
			return err
		}
	}
	var err error
	for try := 0; try < 2; try++ {
		if err = applyTx(ctx, db, name, digest, all, skip); err == nil || hub.Code(err) == hub.FailedPrecondition || ctx.Err() != nil {
			break
		}
	}
	return err
}

func applyTx(ctx context.Context, db *sql.DB, name, digest string, stmts []string, skip bool) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return classify(name, "begin", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, Lock); err != nil {
		return classify(name, "lock", err)
	}
	if skip {
		if ok, err := Current(ctx, tx, name, digest); err != nil || ok {
			return err
		}
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return classify(name, "apply", err)
		}
	}
	if _, err := tx.ExecContext(ctx, createTable); err != nil {
		return classify(name, "create the table of applied DDL", err)
	}
	if _, err := tx.ExecContext(ctx, record, name, digest, time.Now().UnixMicro()); err != nil {
		return classify(name, "record the applied DDL", err)
	}
	return classify(name, "commit", tx.Commit())
}

func execTwice(ctx context.Context, db *sql.DB, stmts []string) error {
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			if _, err2 := db.ExecContext(ctx, q); err2 != nil {
				return err
			}
		}
	}
	return nil
}
