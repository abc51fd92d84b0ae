package webhook_test

import (
	"fmt"

	"github.com/koder/eventhub/transports/webhook"
)

// Check a configuration as New will see it, without a ledger.
func ExampleConfig_WithDefaults() {
	cfg := webhook.Config{Workers: 10}.WithDefaults()
	fmt.Println(cfg.Queue, cfg.Workers, cfg.AttemptTimeout, cfg.Validate() == nil)
	// Output: webhook 10 15s true
}
