package outbox_test

import (
	"fmt"

	"github.com/koder/eventhub/outbox"
)

// Check a configuration as New will see it, without a ledger.
func ExampleConfig_WithDefaults() {
	cfg := outbox.Config{Workers: 50}.WithDefaults()
	fmt.Println(cfg.Queue, cfg.Workers, cfg.Validate() == nil)
	// Output: outbox 50 true
}
