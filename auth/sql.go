package auth

import (
	"context"
	"database/sql"
	"strings"
	"time"
	"unicode"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/dbrow"
	"github.com/koder/eventhub/internal/schemaver"
)

// The package's tables (API keys, the audit trail) live in the ledger's database: pass
// ledger.(*Ledger).DB(), which on PostgreSQL is a pgx stdlib pool whose search_path is
// the ledger's schema and on SQLite the ledger's single-connection modernc file. Like the
// webhook transport's tables, the SQL is the portable subset both run unchanged through
// database/sql: $N placeholders, TEXT and BIGINT columns, times as unix microseconds
// (0 = unset), CREATE ... IF NOT EXISTS.

// migrate runs ddl idempotently, under name in schemaver's record: on PostgreSQL a
// process finding this version recorded runs no DDL (a role without the tables'
// ownership starts), and two processes creating the same table at once, colliding on
// the catalog, each see the other's table on a second try.
func migrate(ctx context.Context, db *sql.DB, op, name string, ddl []string) error {
	return dbErr(op, schemaver.Apply(ctx, db, schemaver.Set{Name: name, Statements: ddl}))
}

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time { return dbrow.FromMicros(us) }

// dbErr classifies a database error (dbrow.Err): NotFound, the context's error, or
// Unavailable.
func dbErr(op string, err error) error { return dbrow.Err("auth", op, err) }

// maxTenantLen bounds tenant ids stored by the package.
const maxTenantLen = 200

// checkTenant validates a tenant id given to a store: non-empty, bounded, printable.
func checkTenant(field, tenant string) error {
	if tenant == "" {
		return hub.Errorf(hub.InvalidArgument, "auth: %s is required", field)
	}
	return checkText(field, tenant, maxTenantLen)
}

func checkText(field, s string, limit int) error {
	if len(s) > limit {
		return hub.Errorf(hub.InvalidArgument, "auth: %s: longer than %d bytes", field, limit)
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0 {
		return hub.Errorf(hub.InvalidArgument, "auth: %s: control or invalid characters", field)
	}
	return nil
}
