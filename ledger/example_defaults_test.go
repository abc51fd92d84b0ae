package ledger_test

import (
	"fmt"

	"github.com/koder/eventhub/ledger"
)

// Check a configuration as Open will see it, without opening anything.
func ExampleConfig_WithDefaults() {
	cfg := ledger.Config{JobTimeout: ledger.DefaultJobTimeout * 4}.WithDefaults()
	fmt.Println(cfg.DSN, cfg.RescueStuckJobsAfter, cfg.Validate() == nil)
	// Output: sqlite://eventhub.db 4m0s true
}
