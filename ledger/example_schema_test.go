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
// writes rows. The backfill runs with the statements, when they run.
func ExampleLedger_ApplySchema() {
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{DSN: "postgres://hub@db.internal/hub"})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	err = l.ApplySchema(ctx, "billing.invoices",
		[]string{
			`CREATE TABLE IF NOT EXISTS billing_invoices (id TEXT PRIMARY KEY, total BIGINT NOT NULL)`,
			`CREATE INDEX IF NOT EXISTS billing_invoices_total ON billing_invoices (total)`,
		},
		`INSERT INTO billing_invoices (id, total) SELECT args->>'invoice_id', 0 FROM river_job
			WHERE kind = 'billing_invoice' ON CONFLICT DO NOTHING`)
	if err != nil {
		log.Fatal(err) // FailedPrecondition: this version's DDL must be run by the owner first
	}
}
