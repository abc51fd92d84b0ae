package ledger_test

import (
	"context"
	"log"

	"github.com/koder/eventhub/ledger"
)

// A package that looks River's jobs up by a key of their args keeps an expression
// index on river_job. EnsureIndexes runs no DDL when the index exists; when a new
// version adds it to a large table it is built concurrently in the background, so the
// replicas already running keep writing and this one starts at once.
func ExampleLedger_EnsureIndexes() {
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{DSN: "postgres://hub@db.internal/hub"})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	err = l.EnsureIndexes(ctx, ledger.Index{
		Name:  "billing_invoice_jobs",
		Table: "river_job",
		Def:   "((args->>'invoice_id')) WHERE kind = 'billing_invoice'",
	})
	if err != nil {
		log.Fatal(err)
	}
	// ... register workers and queues, then l.Start(ctx) ...
}
