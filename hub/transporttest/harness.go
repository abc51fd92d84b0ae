// Package transporttest is the conformance suite every hub.Transport passes.
//
// A transport plugs in with one short test file: a constructor for a fresh Harness per
// test and a Features literal written out in full (false values included, so a reader
// sees what the transport does not do):
//
//	func TestConformance(t *testing.T) {
//		transporttest.Run(t, newHarness, transporttest.Features{
//			Ordered: true, Persistent: true, ConsumerGroups: true, Redelivery: true, MaxBatch: 0,
//		})
//	}
//
// Each check is an exported function runnable alone (TestRoundTrip(t, h, f)), and runs in
// Run as a parallel subtest with its own harness, so its stream, consumer and transport
// are its own. A capability the transport lacks skips the check with the reason. The
// suite never sleeps for a condition: handlers signal through channels, and every wait is
// bounded by Timeout (doubled under CI=true).
//
// The model is go-cloud's pubsub/drivertest and Watermill's pubsub/tests.
package transporttest

import (
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
)

// Harness gives one check everything it touches, fresh, with cleanup registered on the
// testing.T it was built with.
type Harness interface {
	// Transport returns the transport under test. It publishes to a stream (queue, topic,
	// endpoint) of this harness only, named from testenv.Name(t). Every call returns the
	// same transport; the harness closes it at cleanup (Close is idempotent).
	Transport() hub.Transport

	// Consume starts reading the harness's stream as a member of group ("" means the
	// harness's default group) and calls h for each event. A nil return acknowledges the
	// event, an error leaves it for redelivery. Consume returns once reading is
	// established, so events sent afterwards are delivered. stop stops reading and waits
	// for the handler; the harness also stops every consumer at cleanup. A setup failure
	// fails the test (t.Fatal), a missing service fails under CI=true.
	Consume(group string, h hub.Handler) (stop func())

	// Unreachable returns a transport configured like Transport but aimed at a closed
	// port (a broker that is not there). Its Send must fail with an Unavailable code,
	// within the suite's Timeout.
	Unreachable() hub.Transport
}

// Features declares what the transport guarantees. Write every field out, false and
// zero values included.
type Features struct {
	// Ordered: one consumer receives one stream's events in the order they were sent
	// (sequential Sends, and within a batch).
	Ordered bool
	// Persistent: events sent before a consumer starts are delivered once it starts.
	Persistent bool
	// ConsumerGroups: consumers in one group share a stream, each event handled by one of
	// them (T5); another group receives every event again.
	ConsumerGroups bool
	// Redelivery: an event whose handler failed is delivered again.
	Redelivery bool
	// MaxBatch is the largest batch the transport carries in one round trip (0: no
	// limit). Send must still accept larger batches (splitting them); the suite sends
	// batches of exactly MaxBatch and MaxBatch+1.
	MaxBatch int
	// Normalize, when set, maps an event as sent to what the transport's wire format
	// can carry (for example, extension types flattened to strings). The round trip
	// compares the received event with the normalized sent one. Nil: unchanged.
	Normalize func(ev *cloudevent.Event) `yaml:"-"`
	// Timeout, when set, replaces the package-wide Timeout for this transport's waits:
	// for transports whose deliveries are slow by design (a ledger on SQLite under the
	// race detector). It is doubled under CI=true like the default.
	Timeout time.Duration
}

// Timeout bounds each wait of the suite; it is doubled under CI=true.
var Timeout = 20 * time.Second

func timeout() time.Duration { return Features{}.timeout() }

func (f Features) timeout() time.Duration {
	d := Timeout
	if f.Timeout > 0 {
		d = f.Timeout
	}
	if testenv.InCI() {
		return 2 * d
	}
	return d
}

// check is one conformance check.
type check struct {
	name string
	fn   func(t *testing.T, h Harness, f Features)
}

var checks = []check{
	{"RoundTrip", TestRoundTrip},
	{"E4PublishFromHandler", TestE4_PublishFromHandler},
	{"EmptyBatch", TestEmptyBatch},
	{"NoRetain", TestSendDoesNotRetainBatch},
	{"Order", TestOrder},
	{"Persistence", TestPersistence},
	{"Redelivery", TestRedelivery},
	{"DuplicateDelivery", TestDuplicateDelivery},
	{"ConcurrentPublishers", TestConcurrentPublishers},
	{"Batch", TestBatch},
	{"ConsumerGroups", TestConsumerGroups},
	{"CancelledContext", TestCancelledContext},
	{"SendAfterClose", TestSendAfterClose},
	{"DoubleClose", TestDoubleClose},
	{"Unreachable", TestUnreachable},
}

// Run runs every check as a parallel subtest, each with a fresh harness.
func Run(t *testing.T, newHarness func(t *testing.T) Harness, f Features) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, newHarness(t), f)
		})
	}
}

// wantCode fails t unless err is classified as want.
func wantCode(t *testing.T, what string, err error, want hub.ErrorCode) {
	t.Helper()
	if got := hub.Code(err); got != want {
		t.Fatalf("%s: error code = %v (err: %v), want %v", what, got, err, want)
	}
}
