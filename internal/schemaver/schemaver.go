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
// Two marks on a context change what the packages do at Apply and beside it: a
// migration run's (AsMigration, `hub migrate schema`) fails where a start only warns
// and, forced, runs every set; a check run's (AsCheck, `hub migrate schema --check`)
// runs no DDL and collects in a Pending what a start would still have to do.
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
	"slices"
	"strings"
	"sync"
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
const Lock = `SELECT pg_advisory_xact_lock(hashtext('eventhub.ddl.' || coalesce(current_schema(), '')))`

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

// migration is a migration run's mark: whether it forces every set, and what it did.
type migration struct {
	force   bool
	applied *Pending
}

// AsMigration marks ctx as a migration run's (`hub migrate schema`): what a start only
// warns about (an index this role may not build, a background build that failed)
// fails it, and with force every set runs even when its version is recorded, which
// repairs objects dropped behind the record's back. What the run changes is collected
// for Applied.
func AsMigration(ctx context.Context, force bool) context.Context {
	return context.WithValue(ctx, migrationKey{}, &migration{force: force, applied: &Pending{}})
}

// Migration reports whether ctx is a migration run's, and whether it forces every set.
func Migration(ctx context.Context) (migrating, force bool) {
	m, ok := ctx.Value(migrationKey{}).(*migration)
	return ok, ok && m.force
}

// Applied records, in a migration run, one change it made (a set applied, River's
// migrations, an index built, a column added); outside one it does nothing.
func Applied(ctx context.Context, what string) {
	if m, ok := ctx.Value(migrationKey{}).(*migration); ok {
		m.applied.Add(what)
	}
}

// AppliedIn returns what the migration run of ctx changed, in order (nil outside one).
func AppliedIn(ctx context.Context) []string {
	if m, ok := ctx.Value(migrationKey{}).(*migration); ok {
		return m.applied.Items()
	}
	return nil
}

// Pending collects, in a check run (AsCheck), what is not at this version: the sets
// not recorded, and what other packages report through Add (River's migrations, an
// index, a column). Safe for concurrent use.
type Pending struct {
	mu    sync.Mutex
	items []string
}

// Add records one thing not at this version (once: a schema two packages share is
// reported by both).
func (p *Pending) Add(what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.items, what) {
		p.items = append(p.items, what)
	}
}

// Items returns what was added, in order.
func (p *Pending) Items() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.items...)
}

// checkKey marks a context as a check run's (AsCheck).
type checkKey struct{}

// AsCheck marks ctx as a check run's (`hub migrate schema --check`): Apply, and the
// packages that look at Checking, run no DDL and add to p what is not at this version.
func AsCheck(ctx context.Context, p *Pending) context.Context {
	return context.WithValue(ctx, checkKey{}, p)
}

// Checking returns the check run's Pending, nil outside one.
func Checking(ctx context.Context) *Pending {
	p, _ := ctx.Value(checkKey{}).(*Pending)
	return p
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
	// A query of the catalog, not to_regclass: a session's cache can keep a "no such
	// table" from before it waited for the lock, and the record table is the one
	// CREATE TABLE makes, in the current schema.
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class
		WHERE relname = 'eventhub_schema' AND relnamespace = current_schema()::regnamespace)`).Scan(&ok)
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
// what to do; what retrying can mend (class 08 connection, 57P0x shutdown, 40001/40P01
// serialization and deadlock, no server reply at all) Unavailable, and class 53
// ResourceExhausted; any other answer of the server's (a statement it rejects, a
// feature it lacks, a backfill's constraint) Internal: starting again gets the same; the
// context's as it is.
func classify(name, op string, err error) error {
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case !errors.As(err, &pe):
		return hub.Errorf(hub.Unavailable, "%s: %s: %w", name, op, err)
	case pe.Code == "42501":
		return hub.Errorf(hub.FailedPrecondition,
			"%s: this version's tables are not in the schema yet and this role may not create them: "+
				"run `hub migrate schema` (or start this version once) as the tables' owner, "+
				"after which this role starts without DDL: %w", name, err)
	case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P0"), pe.Code == "40001", pe.Code == "40P01":
		return hub.Errorf(hub.Unavailable, "%s: %s: %w", name, op, err)
	case strings.HasPrefix(pe.Code, "53"):
		return hub.Errorf(hub.ResourceExhausted, "%s: %s: %w", name, op, err)
	}
	return hub.Errorf(hub.Internal, "%s: %s: %w", name, op, err)
}

// Set is a package's DDL of one job, applied and recorded as a whole.
type Set struct {
	// Name is the set's name in the record, e.g. "webhook.tables".
	Name string
	// Statements are idempotent DDL; their text is the set's version (Digest).
	Statements []string
	// Missing, when set, is a query returning one boolean: whether the objects whose
	// data Backfill fills are missing (a table an upgrade adds). It is asked before
	// the statements run, and again under the lock.
	Missing string
	// Backfill runs after the statements, in their transaction, when Missing said
	// true: what an upgrade needs once, such as filling a new table from an existing
	// one. Not part of the version.
	Backfill []string
}

// Apply runs set's statements on db unless its version is recorded, and records it,
// in one transaction (read committed) under Lock; once the lock is held the record and
// Missing are read again, so a process that waited for another's migration finds it
// done. Objects reported missing run the set whatever the record says, with its
// backfill; so does every set in a forced migration (AsMigration). A transaction
// that fails is tried once more: a process of an earlier version, which took no lock,
// can collide with it on the catalog. Errors are classified (classify).
//
// On SQLite (any db not on pgx), which has no roles and whose file has one writer,
// Apply runs the statements as they are, each tried a second time when it fails, and
// the backfill when Missing said so.
func Apply(ctx context.Context, db *sql.DB, set Set) error {
	_, pg := db.Driver().(*stdlib.Driver)
	if p := Checking(ctx); p != nil {
		if pg {
			return check(ctx, db, set, p)
		}
		return nil // SQLite keeps no record: every start applies its statements
	}
	if !pg {
		missing, err := isMissing(ctx, db, set)
		if err != nil {
			return err
		}
		if err := execTwice(ctx, db, set.Statements); err != nil || !missing {
			return err
		}
		return execTwice(ctx, db, set.Backfill)
	}
	digest := Digest(set.Statements)
	if run, _, err := due(ctx, db, set, digest); err != nil || !run {
		return err
	}
	var err error
	for try := 0; try < 2; try++ {
		if err = applyTx(ctx, db, set, digest); err == nil || ctx.Err() != nil || !(hub.Code(err) == hub.Unavailable || collided(err)) {
			break
		}
	}
	return err
}

// collided reports a catalog collision with a process that took no lock (a unique
// violation on pg_class or pg_type, a duplicate table, object or schema): the other's
// object exists by the time the error is raised, and a second try sees it.
func collided(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07" || pe.Code == "42710" || pe.Code == "42P06")
}

// check adds set to p when its objects are missing or its version is not recorded.
// A schema on the search_path the role may not use is an error (grant USAGE), not a
// pending migration: current_schema() is NULL then, as when the schema does not exist
// yet (which the packages report themselves).
func check(ctx context.Context, db *sql.DB, set Set, p *Pending) error {
	var schema sql.NullString
	var denied sql.NullString
	err := db.QueryRowContext(ctx, `SELECT current_schema(), (SELECT n.nspname FROM pg_catalog.pg_namespace n
		WHERE quote_ident(n.nspname) = ANY (string_to_array(replace(current_setting('search_path'), ' ', ''), ','))
			AND NOT has_schema_privilege(n.oid, 'USAGE') LIMIT 1)`).Scan(&schema, &denied)
	if err != nil {
		return classify(set.Name, "look up the schema", err)
	}
	if !schema.Valid && denied.Valid {
		return hub.Errorf(hub.FailedPrecondition, "%s: this role may not use schema %s: grant it USAGE on it", set.Name, denied.String)
	}
	missing, err := isMissing(ctx, db, set)
	if err != nil {
		return classify(set.Name, "look up its objects", err)
	}
	ok, err := Current(ctx, db, set.Name, Digest(set.Statements))
	if err != nil {
		return err
	}
	if missing || !ok {
		where := ""
		if schema.Valid {
			where = " (schema " + schema.String + ")"
		}
		p.Add("DDL " + set.Name + where)
	}
	return nil
}

// due reports, read with q, whether set must run: its objects missing (then with its
// backfill), a forced migration, or its version not recorded.
func due(ctx context.Context, q querier, set Set, digest string) (run, missing bool, err error) {
	if missing, err = isMissing(ctx, q, set); err != nil {
		return false, false, classify(set.Name, "look up its objects", err)
	}
	if _, force := Migration(ctx); force || missing {
		return true, missing, nil
	}
	ok, err := Current(ctx, q, set.Name, digest)
	return !ok, false, err
}

// isMissing asks set's Missing query (false without one).
func isMissing(ctx context.Context, q querier, set Set) (bool, error) {
	if set.Missing == "" {
		return false, nil
	}
	var missing bool
	err := q.QueryRowContext(ctx, set.Missing).Scan(&missing)
	return missing, err
}

func applyTx(ctx context.Context, db *sql.DB, set Set, digest string) error {
	// Read committed whatever the role's default: a snapshot taken before the wait
	// for the lock would not see the record of the migration waited for.
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return classify(set.Name, "begin", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, Lock); err != nil {
		return classify(set.Name, "lock", err)
	}
	run, missing, err := due(ctx, tx, set, digest)
	if err != nil || !run {
		return err
	}
	stmts := set.Statements
	if missing {
		stmts = append(append([]string{}, stmts...), set.Backfill...)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return classify(set.Name, "apply", err)
		}
	}
	if _, err := tx.ExecContext(ctx, createTable); err != nil {
		return classify(set.Name, "create the table of applied DDL", err)
	}
	if _, err := tx.ExecContext(ctx, record, set.Name, digest, time.Now().UnixMicro()); err != nil {
		return classify(set.Name, "record the applied DDL", err)
	}
	if err := tx.Commit(); err != nil {
		return classify(set.Name, "commit", err)
	}
	Applied(ctx, "DDL "+set.Name)
	return nil
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
