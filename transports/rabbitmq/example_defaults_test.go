package rabbitmq_test

import (
	"fmt"

	"github.com/koder/eventhub/transports/rabbitmq"
)

// Check a configuration as New will see it, without connecting.
func ExampleConfig_WithDefaults() {
	cfg := rabbitmq.Config{URL: "amqp://guest:guest@127.0.0.1:5672/"}.WithDefaults()
	fmt.Println(cfg.Exchange, cfg.Mode, cfg.Validate() == nil)
	// Output: eventhub binary true
}
