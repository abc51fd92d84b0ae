package ledger_test

import (
	"context"
	"log"
	"time"

	"github.com/koder/eventhub/ledger"
)

// A queue whose finished jobs need no record keeps them for a minute, while the
// ledger's other completed jobs stay for CompletedRetention (the outbox does this for
// its relayed rows).
func ExampleLedger_RetainCompleted() {
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{DSN: "sqlite://eventhub.db", CompletedRetention: 24 * time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	if err := l.RetainCompleted("relay", time.Minute); err != nil {
		log.Fatal(err)
	}
	if err := l.AddQueue("relay", 100); err != nil {
		log.Fatal(err)
	}
	// ... register workers, then l.Start(ctx) ...
}
