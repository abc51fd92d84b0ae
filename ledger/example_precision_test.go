package ledger_test

import (
	"fmt"
	"time"

	"github.com/koder/eventhub/ledger"
)

// Compare a stored creation time with a bound at the ledger's precision: a row created
// in the bound's millisecond counts as created at the bound, on every store.
func ExampleTruncate() {
	created := time.Date(2026, 12, 1, 9, 0, 0, 120_000_000, time.UTC) // as SQLite stores it
	since := created.Add(700 * time.Microsecond)                      // taken later, same millisecond
	fmt.Println(created.Before(since), ledger.Truncate(created).Before(ledger.Truncate(since)))
	// Output: true false
}
