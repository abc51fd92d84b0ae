package dedupe

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// The window's SQL, per backend. Times are Unix microseconds in a bigint, so both
// backends compare them the same way and no driver converts time zones. PostgreSQL
// takes a batch as arrays through unnest (one statement text, whatever the batch size,
// so pgx's statement cache serves it); SQLite as a VALUES list.

func (s *Store) migrate(ctx context.Context) error {
	blob, extra := "bytea", ""
	if s.backend == ledger.SQLite {
		blob, extra = "BLOB", " WITHOUT ROWID"
	}
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS ` + s.table + ` (
			tenant     TEXT NOT NULL,
			event_id   TEXT NOT NULL,
			digest     ` + blob + ` NOT NULL,
			expires_at BIGINT NOT NULL,
			PRIMARY KEY (tenant, event_id))` + extra,
		`CREATE INDEX IF NOT EXISTS ` + s.cfg.Table + `_expires ON ` + s.table + ` (expires_at)`,
	}
	if err := s.l.ApplySchema(ctx, ledger.Schema{Name: "dedupe." + s.cfg.Table, Statements: stmts}); err != nil {
		if hub.Code(err) == hub.FailedPrecondition {
			return err // the role may not change the schema: the error says what to do
		}
		return hub.Errorf(hub.Unavailable, "dedupe: create %s: %w", s.cfg.Table, err)
	}
	return nil
}

// The lookups join the batch's keys to the table, keys first, so each key is one search
// of the primary key whatever the table holds. SQLite plans `(tenant, event_id) IN
// (VALUES ...)` of more than one row as a scan of the whole table, and a filter on
// expires_at alone by the expiry index (every unexpired row): a CROSS JOIN fixes the
// loop order (TestLookupSearchesThePrimaryKey pins the plan).

func lookupPostgres(table string) string {
	return `SELECT t.tenant, t.event_id, t.digest FROM unnest($2::text[], $3::text[]) AS k(tenant, event_id)
		JOIN ` + table + ` AS t ON t.tenant = k.tenant AND t.event_id = k.event_id WHERE t.expires_at > $1`
}

// lookupSQLite takes n (tenant, event id) pairs, then the time.
func lookupSQLite(table string, n int) string {
	return `SELECT t.tenant, t.event_id, t.digest FROM (VALUES ` + valuesList(n, 2) + `) AS k
		CROSS JOIN ` + table + ` AS t ON t.tenant = k.column1 AND t.event_id = k.column2 WHERE t.expires_at > ?`
}

// record is a row of the window.
type record struct {
	tenant, id string
	digest     []byte
}

// lookup returns the unexpired records of keys[idx].
func (s *Store) lookup(ctx context.Context, keys []hub.EventKey, idx []int, now time.Time) ([]record, error) {
	var rows interface {
		Next() bool
		Scan(...any) error
		Close() error
		Err() error
	}
	if s.backend == ledger.Postgres {
		tenants, ids, _ := columns(keys, idx)
		r, err := s.l.Pool().Query(ctx, lookupPostgres(s.table), now.UnixMicro(), tenants, ids)
		if err != nil {
			return nil, classify("lookup", err)
		}
		rows = pgRows{r}
	} else {
		args := make([]any, 0, 2*len(idx)+1)
		for _, i := range idx {
			args = append(args, keys[i].Tenant, keys[i].ID)
		}
		args = append(args, now.UnixMicro())
		r, err := s.l.DB().QueryContext(ctx, lookupSQLite(s.table, len(idx)), args...)
		if err != nil {
			return nil, classify("lookup", err)
		}
		rows = r
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var r record
		if err := rows.Scan(&r.tenant, &r.id, &r.digest); err != nil {
			return nil, classify("lookup", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, classify("lookup", err)
	}
	return out, nil
}

// upsert records keys[idx] until now+ttl in tx (a pgx.Tx, a *sql.Tx, or nil for a
// statement of its own). A key held by an unexpired record is left alone; the result
// is the number of keys recorded, so fewer than len(idx) means another request holds
// some of them.
func (s *Store) upsert(ctx context.Context, tx any, keys []hub.EventKey, idx []int, now time.Time, ttl time.Duration) (int64, error) {
	expires, nowUS := now.Add(ttl).UnixMicro(), now.UnixMicro()
	var q string
	var args []any
	if s.backend == ledger.Postgres {
		tenants, ids, digests := columns(keys, idx)
		q = `INSERT INTO ` + s.table + ` AS cur (tenant, event_id, digest, expires_at)
			SELECT k.tenant, k.event_id, k.digest, $4 FROM unnest($1::text[], $2::text[], $3::bytea[]) AS k(tenant, event_id, digest)
			ON CONFLICT (tenant, event_id) DO UPDATE SET digest = EXCLUDED.digest, expires_at = EXCLUDED.expires_at
			WHERE cur.expires_at <= $5`
		args = []any{tenants, ids, digests, expires, nowUS}
	} else {
		args = make([]any, 0, 4*len(idx)+1)
		for _, i := range idx {
			args = append(args, keys[i].Tenant, keys[i].ID, keys[i].Digest[:], expires)
		}
		args = append(args, nowUS)
		q = `INSERT INTO ` + s.table + ` AS cur (tenant, event_id, digest, expires_at) VALUES ` + valuesList(len(idx), 4) + `
			ON CONFLICT (tenant, event_id) DO UPDATE SET digest = excluded.digest, expires_at = excluded.expires_at
			WHERE cur.expires_at <= ?`
	}
	n, err := s.exec(ctx, tx, q, args...)
	if err != nil {
		return 0, classify("record", err)
	}
	return n, nil
}

// prune deletes at most PruneBatch expired records and returns how many it deleted.
func (s *Store) prune(ctx context.Context, now time.Time) (int64, error) {
	n, err := s.exec(ctx, nil, s.pruneQuery(), now.UnixMicro(), s.cfg.PruneBatch)
	if err != nil {
		return 0, classify("prune", err)
	}
	return n, nil
}

// pruneQuery deletes at most $2 records expired at $1, found by the expiry index.
func (s *Store) pruneQuery() string {
	q := `DELETE FROM ` + s.table + ` WHERE (tenant, event_id) IN
		(SELECT tenant, event_id FROM ` + s.table + ` WHERE expires_at <= ? LIMIT ?)`
	if s.backend == ledger.Postgres {
		q = strings.Replace(strings.Replace(q, "?", "$1", 1), "?", "$2", 1)
	}
	return q
}

// exec runs q in tx, or on its own when tx is nil, and returns the rows affected.
func (s *Store) exec(ctx context.Context, tx any, q string, args ...any) (int64, error) {
	switch tx := tx.(type) {
	case pgx.Tx:
		tag, err := tx.Exec(ctx, q, args...)
		return tag.RowsAffected(), err
	case *sql.Tx:
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	if s.backend == ledger.Postgres {
		tag, err := s.l.Pool().Exec(ctx, q, args...)
		return tag.RowsAffected(), err
	}
	res, err := s.l.DB().ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// inTx runs f in a transaction of the ledger's database, of the type the ledger's
// EnqueueTx takes on this backend, and commits it when f succeeds (the ledger's InTx);
// f's own error comes back as is, a failed begin or commit classified.
func (s *Store) inTx(ctx context.Context, f func(tx any) error) error {
	failed := false
	err := s.l.InTx(ctx, func(tx any) error {
		if err := f(tx); err != nil {
			failed = true
			return err
		}
		return nil
	})
	if failed {
		return err
	}
	return classify("commit", err)
}

func columns(keys []hub.EventKey, idx []int) (tenants, ids []string, digests [][]byte) {
	tenants, ids, digests = make([]string, len(idx)), make([]string, len(idx)), make([][]byte, len(idx))
	for j, i := range idx {
		tenants[j], ids[j], digests[j] = keys[i].Tenant, keys[i].ID, keys[i].Digest[:]
	}
	return tenants, ids, digests
}

// valuesList returns "(?, ?), (?, ?)" for rows rows of cols placeholders.
func valuesList(rows, cols int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	var b strings.Builder
	b.Grow(rows * (len(one) + 2))
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return b.String()
}

// classify gives a database error its hub code: the caller may retry an unavailable
// database; context errors pass unwrapped.
func classify(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return hub.Errorf(hub.Unavailable, "dedupe: %s: %w", op, err)
}

// pgRows adapts pgx.Rows (whose Close returns nothing) to the loop in lookup.
type pgRows struct{ pgx.Rows }

func (r pgRows) Close() error { r.Rows.Close(); return nil }
