package rabbitmq

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind: a connection loop,
// confirm tracker or consumer worker that outlives Close would show up here.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
