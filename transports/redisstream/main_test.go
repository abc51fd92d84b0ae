package redisstream

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind: consumers, claimers,
// blocking reads and Send round trips must all end by Close. go-redis v9.23 starts a
// circuit-breaker cleanup goroutine per failed endpoint (maintnotifications) that its
// Client.Close does not stop, and watermill-redisstream's subscriber (the benchmark
// baseline) leaves its read loop sleeping 500 ms after Close; both are ignored. So is
// Watermill's universal suite's multiplier (TestWM_RedisUniversal): it forwards messages
// with a blocking send that nobody reads once a test has what it wanted, so a late
// redelivery stays in its forwarder.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/redis/go-redis/v9/maintnotifications.(*CircuitBreakerManager).cleanupLoop"),
		goleak.IgnoreAnyFunction("github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream.(*Subscriber).read"),
		goleak.IgnoreAnyFunction("github.com/ThreeDotsLabs/watermill/internal/subscriber.(*multiplier).Subscribe.func2"),
		goleak.IgnoreAnyFunction("github.com/ThreeDotsLabs/watermill/internal/subscriber.(*multiplier).Subscribe.func3"))
}
