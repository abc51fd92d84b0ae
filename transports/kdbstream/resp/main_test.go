package resp

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind (a blocked command's
// handler or close watcher, a connection's goroutine after Close). go-redis v9.23's
// maintnotifications cleanup goroutine outlives Client.Close and is ignored, as in the
// Redis transport's tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/redis/go-redis/v9/maintnotifications.(*CircuitBreakerManager).cleanupLoop"))
}
