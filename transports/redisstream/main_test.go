package redisstream

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind: consumers, claimers,
// blocking reads and Send round trips must all end by Close. go-redis v9.23 starts a
// circuit-breaker cleanup goroutine per failed endpoint (maintnotifications) that its
// Client.Close does not stop, and watermill-redisstream's subscriber (the benchmark
// baseline) leaves its read loop sleeping 500 ms after Close; both are ignored.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/redis/go-redis/v9/maintnotifications.(*CircuitBreakerManager).cleanupLoop"),
		goleak.IgnoreAnyFunction("github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream.(*Subscriber).read"))
}
