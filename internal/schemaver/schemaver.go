// Package schemaver records which version of a package's DDL a PostgreSQL schema
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
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/koder/eventhub/hub"
)

// CreateTable creates the record table, in the schema the statements run in (the
// connection's search_path).
const CreateTable = `CREATE TABLE IF NOT EXISTS eventhub_schema (
	name       TEXT PRIMARY KEY,
	digest     TEXT NOT NULL,
	applied_at BIGINT NOT NULL
)`

// Record stores name's digest ($1 name, $2 digest, $3 unix microseconds), in the
// transaction of the statements where there is one.
const Record = `INSERT INTO eventhub_schema (name, digest, applied_at) VALUES ($1, $2, $3)
	ON CONFLICT (name) DO UPDATE SET digest = excluded.digest, applied_at = excluded.applied_at`

const lookUp = `SELECT digest FROM eventhub_schema WHERE name = $1`

// Digest identifies a set of statements by their text.
func Digest(stmts []string) string {
	h := sha256.New()
	for _, s := range stmts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Now is the applied_at value Record takes.
func Now() int64 { return time.Now().UnixMicro() }

// Current reports whether db records digest for name. Any error reading it (no record
// table yet, a database that is down) reads as "not current": the caller applies the
// statements, and that reports the error that matters.
func Current(ctx context.Context, db *sql.DB, name, digest string) bool {
	var got string
	if err := db.QueryRowContext(ctx, lookUp, name).Scan(&got); err != nil {
		return false
	}
	return got == digest
}

// Denied turns PostgreSQL's refusal to run name's DDL for lack of privilege (42501:
// not the owner, no CREATE on the schema) into a FailedPrecondition that says what to
// do; other errors are returned as they are.
func Denied(name string, err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" {
		return err
	}
	return hub.Errorf(hub.FailedPrecondition,
		"%s: this version's tables are not in the schema yet and this role may not create them: "+
			"run `hub migrate schema` (or start this version once) as the tables' owner, "+
			"after which this role starts without DDL: %w", name, err)
}

// Apply runs stmts on db unless name's digest of them is recorded, then records it.
// Each statement is tried a second time when it fails: processes starting at once can
// collide on the catalog running the same CREATE ... IF NOT EXISTS, and the second try
// sees the other's object. The record is kept only on PostgreSQL (a pgx stdlib pool);
// elsewhere (SQLite, which has no roles) stmts run as they are.
func Apply(ctx context.Context, db *sql.DB, name string, stmts []string) error {
	if _, pg := db.Driver().(*stdlib.Driver); !pg {
		return execTwice(ctx, db, stmts...)
	}
	digest := Digest(stmts)
	if Current(ctx, db, name, digest) {
		return nil
	}
	if err := execTwice(ctx, db, append(append([]string{}, stmts...), CreateTable)...); err != nil {
		return Denied(name, err)
	}
	if _, err := db.ExecContext(ctx, Record, name, digest, Now()); err != nil {
		return fmt.Errorf("%s: record the schema's version: %w", name, err)
	}
	return nil
}

func execTwice(ctx context.Context, db *sql.DB, stmts ...string) error {
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			if _, err2 := db.ExecContext(ctx, q); err2 != nil {
				return err
			}
		}
	}
	return nil
}
