package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// TestHA_CreateTablesConcurrent: eight sessions creating the same tables at once (as
// replicas starting together do) all succeed. Without the advisory lock PostgreSQL's
// IF NOT EXISTS lets two of them race into a unique violation on its catalog.
func TestHA_CreateTablesConcurrent(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		l := ledgertest.Open(t, b, ledger.Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		table := "ddl_test"
		if b == ledger.Postgres {
			table = l.Schema() + ".ddl_test"
		}
		for round := range 5 {
			stmts := []string{
				fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s_%d (id BIGINT PRIMARY KEY, v TEXT)", table, round),
				fmt.Sprintf("CREATE INDEX IF NOT EXISTS ddl_test_%d_v ON %s_%d (v)", round, table, round),
			}
			errs := make([]error, 8)
			var wg sync.WaitGroup
			for i := range errs {
				wg.Go(func() { errs[i] = l.CreateTables(ctx, stmts...) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	})
}
