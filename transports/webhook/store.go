package webhook

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/dbrow"
	"github.com/koder/eventhub/internal/schemaver"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/secrets"
)

// The transport's own tables live in the ledger's database (its PostgreSQL schema via
// search_path, or the SQLite file). The SQL is the portable subset both backends run
// unchanged through database/sql: $N placeholders, TEXT/BIGINT/INTEGER columns, times
// as unix microseconds, ON CONFLICT DO NOTHING, RETURNING.
var schemaSQL = []string{
	`CREATE TABLE IF NOT EXISTS webhook_endpoints (
		id TEXT PRIMARY KEY,
		url TEXT NOT NULL,
		secrets TEXT NOT NULL,
		patterns TEXT NOT NULL,
		tenant_id TEXT NOT NULL DEFAULT '',
		enabled INTEGER NOT NULL,
		disabled_reason TEXT NOT NULL DEFAULT '',
		description TEXT NOT NULL DEFAULT '',
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL,
		version BIGINT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS webhook_breakers (
		endpoint_id TEXT PRIMARY KEY,
		state TEXT NOT NULL,
		failures INTEGER NOT NULL,
		opened_at BIGINT NOT NULL,
		probe_until BIGINT NOT NULL,
		trips BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	)`,
	// The deliveries capped fan-outs inserted per endpoint, ever: fanout.go's room.
	`CREATE TABLE IF NOT EXISTS webhook_cap_clock (
		endpoint_id TEXT PRIMARY KEY,
		inserted BIGINT NOT NULL
	)`,
}

// store is the SQL of endpoints and breakers. ring, when set, encrypts the endpoints'
// signing secrets at rest (secrets_at_rest.go).
type store struct {
	db   *sql.DB
	ring *secrets.Keyring
}

// migrate creates the transport's tables on l's database (l.ApplySchema: one
// transaction under the schema's DDL lock on PostgreSQL, so replicas starting at once
// do not collide on the catalog, and none at all once this version's set is recorded).
func (s store) migrate(ctx context.Context, l *ledger.Ledger) error {
	qs := append(append(append([]string{}, schemaSQL...), historySQL...), controlsSQL...)
	if err := l.ApplySchema(ctx, ledger.Schema{Name: "webhook.tables", Statements: qs}); err != nil {
		return dbErr("migrate", err)
	}
	if err := s.addColumn(ctx, "webhook_endpoints", "controls", `TEXT NOT NULL DEFAULT '{}'`); err != nil {
		return err
	}
	return s.migrateKeys(ctx, l)
}

// addColumn adds a column to a table created by an earlier version, once: SQLite has
// no ADD COLUMN IF NOT EXISTS, so the column is probed first, and a concurrent adder's
// win (a duplicate-column error) is told apart by probing again.
func (s store) addColumn(ctx context.Context, table, column, def string) error {
	probe := `SELECT ` + column + ` FROM ` + table + ` WHERE 1 = 0`
	_, err := s.db.ExecContext(ctx, probe)
	if err == nil {
		return nil
	}
	if p := schemaver.Checking(ctx); p != nil {
		// Only a missing column or table is pending; any other failure (the role may not
		// read the table) is the check's error, which no migration would mend.
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || (pe.Code != "42703" && pe.Code != "42P01") {
			return dbErr("check "+table+"."+column, err)
		}
		p.Add("column " + table + "." + column)
		return nil
	}
	if _, err := s.db.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN `+column+` `+def); err != nil {
		if _, err2 := s.db.ExecContext(ctx, probe); err2 != nil {
			return dbErr("migrate: add "+table+"."+column, err)
		}
		return nil // another process added it
	}
	schemaver.Applied(ctx, "column "+table+"."+column)
	return nil
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return dbrow.FromMicros(us) }

// dbErr classifies a database error (dbrow.Err): NotFound, the context's error, or
// Unavailable.
func dbErr(op string, err error) error { return dbrow.Err("webhook", op, err) }

const endpointCols = `id, url, secrets, patterns, tenant_id, enabled, disabled_reason, description, created_at, updated_at, version, controls`

type scanner interface{ Scan(dest ...any) error }

// scanEndpoint reads one endpoint row. With open, its secrets are decrypted (a worker
// signs with them, an update rewrites them); without, they stay as stored, which is all
// fan-out and the listings need (they read patterns, tenants and the secrets' count),
// so a row whose secret cannot be decrypted never stops delivery to the others.
func (s store) scanEndpoint(r scanner, open bool) (*Endpoint, error) {
	var (
		e                 Endpoint
		secrets, patterns string
		controls          string
		enabled           int
		created, updated  int64
	)
	if err := r.Scan(&e.ID, &e.URL, &secrets, &patterns, &e.TenantID, &enabled, &e.DisabledReason,
		&e.Description, &created, &updated, &e.version, &controls); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(controls), &e.Controls); err != nil {
		return nil, hub.Errorf(hub.Internal, "webhook: endpoint %s: controls: %w", e.ID, err)
	}
	if open {
		if err := s.openTLS(e.ID, &e.Controls.TLS); err != nil {
			return nil, err
		}
		if err := s.openHeaders(e.ID, e.Controls.Headers); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal([]byte(secrets), &e.Secrets); err != nil {
		return nil, hub.Errorf(hub.Internal, "webhook: endpoint %s: secrets: %w", e.ID, err)
	}
	if open {
		if err := s.openSecrets(e.ID, e.Secrets); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal([]byte(patterns), &e.Patterns); err != nil {
		return nil, hub.Errorf(hub.Internal, "webhook: endpoint %s: patterns: %w", e.ID, err)
	}
	e.Enabled = enabled != 0
	e.CreatedAt, e.UpdatedAt = fromMicros(created), fromMicros(updated)
	var err error
	if e.compiled, err = compilePatterns(e.Patterns); err != nil {
		return nil, err
	}
	if e.cc, err = e.Controls.compile(); err != nil {
		return nil, hub.Errorf(hub.Internal, "webhook: endpoint %s: stored controls: %w", e.ID, err)
	}
	return &e, nil
}

func (s store) insertEndpoint(ctx context.Context, e *Endpoint) error {
	secrets, err := s.sealSecrets(e.ID, e.Secrets)
	if err != nil {
		return err
	}
	patterns, _ := json.Marshal(e.Patterns)
	controls, err := s.sealControls(e.ID, e.Controls)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr("create endpoint", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+endpointCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		e.ID, e.URL, secrets, string(patterns), e.TenantID, boolInt(e.Enabled), e.DisabledReason,
		e.Description, micros(e.CreatedAt), micros(e.UpdatedAt), e.version, controls); err != nil {
		return dbErr("create endpoint", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_breakers
		(endpoint_id, state, failures, opened_at, probe_until, trips, updated_at)
		VALUES ($1, 'closed', 0, 0, 0, 0, $2) ON CONFLICT (endpoint_id) DO NOTHING`,
		e.ID, micros(e.CreatedAt)); err != nil {
		return dbErr("create endpoint", err)
	}
	return dbErr("create endpoint", tx.Commit())
}

func (s store) getEndpoint(ctx context.Context, id string) (*Endpoint, error) {
	e, err := s.scanEndpoint(s.db.QueryRowContext(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE id = $1`, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hub.Errorf(hub.NotFound, "webhook: endpoint %s not found", id)
	}
	if err != nil && hub.Code(err) != hub.Unknown {
		return nil, err // the row's own error (its secrets do not decrypt): not the database's
	}
	return e, dbErr("get endpoint", err)
}

// endpointQuery selects the endpoints listEndpoints reads.
type endpointQuery struct {
	enabledOnly bool
	// tenant: only this tenant's endpoints ("" = every endpoint).
	tenant string
	// open decrypts the secrets (see scanEndpoint).
	open bool
}

func (s store) listEndpoints(ctx context.Context, eq endpointQuery) ([]*Endpoint, error) {
	return s.listEndpointsOn(ctx, s.db, eq)
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// listEndpointsOn is listEndpoints through q (as queryEach takes it): a caller's
// transaction reads them on its own connection. On SQLite the transaction holds the
// ledger's only connection; on PostgreSQL a second connection per transaction could
// starve the pool (every connection held by a transaction waiting for one more).
func (s store) listEndpointsOn(ctx context.Context, q any, eq endpointQuery) ([]*Endpoint, error) {
	sel := `SELECT ` + endpointCols + ` FROM webhook_endpoints WHERE ($1 = 0 OR enabled = 1) AND ($2 = '' OR tenant_id = $2)`
	var out []*Endpoint
	err := queryEach(ctx, q, sel+` ORDER BY id`, []any{boolInt(eq.enabledOnly), eq.tenant}, func(scan func(...any) error) error {
		e, err := s.scanEndpoint(scanFunc(scan), eq.open)
		if err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil && hub.Code(err) != hub.Unknown {
		return nil, err
	}
	if err != nil {
		return nil, dbErr("list endpoints", err)
	}
	return out, nil
}

// scanFunc is a row's Scan as a scanner.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// saveEndpoint writes e if nobody changed it since it was read (optimistic lock on
// version); false when somebody did.
func (s store) saveEndpoint(ctx context.Context, e *Endpoint) (bool, error) {
	secrets, err := s.sealSecrets(e.ID, e.Secrets)
	if err != nil {
		return false, err
	}
	patterns, _ := json.Marshal(e.Patterns)
	controls, err := s.sealControls(e.ID, e.Controls)
	if err != nil {
		return false, err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE webhook_endpoints SET url = $2, secrets = $3, patterns = $4,
		tenant_id = $5, enabled = $6, disabled_reason = $7, description = $8, updated_at = $9, version = version + 1,
		controls = $11
		WHERE id = $1 AND version = $10`,
		e.ID, e.URL, secrets, string(patterns), e.TenantID, boolInt(e.Enabled), e.DisabledReason,
		e.Description, micros(e.UpdatedAt), e.version, controls)
	if err != nil {
		return false, dbErr("update endpoint", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, dbErr("update endpoint", err)
	}
	if n == 1 {
		e.version++
	}
	return n == 1, nil
}

// disableEndpoint is the unconditional disable a 410 triggers (no read first).
func (s store) disableEndpoint(ctx context.Context, id, reason string, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE webhook_endpoints SET enabled = 0, disabled_reason = $2,
		updated_at = $3, version = version + 1 WHERE id = $1 AND enabled = 1`, id, reason, micros(now))
	return dbErr("disable endpoint", err)
}

func (s store) deleteEndpoint(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr("delete endpoint", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	res, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = $1`, id)
	if err != nil {
		return dbErr("delete endpoint", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return hub.Errorf(hub.NotFound, "webhook: endpoint %s not found", id)
	}
	for _, q := range []string{`DELETE FROM webhook_breakers WHERE endpoint_id = $1`, `DELETE FROM webhook_cap_clock WHERE endpoint_id = $1`} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return dbErr("delete endpoint", err)
		}
	}
	return dbErr("delete endpoint", tx.Commit())
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sealControls is the controls column for endpoint id: JSON, the TLS client key
// (tls.go) and the header values (controls_at_rest.go) encrypted.
func (s store) sealControls(id string, c Controls) (string, error) {
	var err error
	if c.TLS, err = s.sealTLS(id, c.TLS); err != nil {
		return "", err
	}
	if c.Headers, err = s.sealHeaders(id, c.Headers); err != nil {
		return "", err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", hub.Wrap(hub.Internal, err)
	}
	return string(b), nil
}
