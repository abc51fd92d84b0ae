package ledger_test

import (
	"context"
	"log"

	"github.com/koder/eventhub/ledger"
)

// A package with a table of its own beside River's creates it with ApplySchema at
// start. The first process of a version runs the statements (under the schema's DDL
// lock, replicas starting together take turns) and records them; every later start
// finds them recorded and runs no DDL, so it may run as a role that only reads and
// writes rows. When Missing finds the table missing (an upgrade from a version without
// it), the set runs with its backfill.
func ExampleLedger_ApplySchema() {
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{DSN: "postgres://hub@db.internal/hub"})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	err = l.ApplySchema(ctx, ledger.Schema{
		Name: "billing.invoices",
		Statements: []string{
			`CREATE TABLE IF NOT EXISTS billing_invoices (id TEXT PRIMARY KEY, total BIGINT NOT NULL)`,
			`CREATE INDEX IF NOT EXISTS billing_invoices_total ON billing_invoices (total)`,
		},
		Missing: `SELECT NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class
			WHERE relname = 'billing_invoices' AND relnamespace = current_schema()::regnamespace)`,
		Backfill: []string{`INSERT INTO billing_invoices (id, total) SELECT args->>'invoice_id', 0 FROM river_job
			WHERE kind = 'billing_invoice' ON CONFLICT DO NOTHING`},
	})
	if err != nil {
		log.Fatal(err) // FailedPrecondition: this version's DDL must be run by the owner first
	}
}
