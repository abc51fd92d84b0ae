package rabbitmq

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind: a connection loop,
// confirm tracker or consumer worker that outlives Close would show up here. Watermill's
// universal suite's multiplier (TestWM_RabbitMQUniversal) is ignored: it forwards
// messages with a blocking send that nobody reads once a test has what it wanted, so a
// late redelivery stays in its forwarder.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/ThreeDotsLabs/watermill/internal/subscriber.(*multiplier).Subscribe.func2"),
		goleak.IgnoreAnyFunction("github.com/ThreeDotsLabs/watermill/internal/subscriber.(*multiplier).Subscribe.func3"))
}
