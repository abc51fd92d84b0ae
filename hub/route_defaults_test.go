package hub_test

import (
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
)

// WithRetry's zero arguments keep the defaults, and a zero max is never below the
// first delay, so a configuration's unset fields can be passed through as they are.
func TestWithRetryZeroKeepsDefaults(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	for i, opt := range []hub.RouteOption{
		hub.WithRetry(0, 0, 0),
		hub.WithRetry(2, 0, 0),
		hub.WithRetry(0, time.Hour, 0), // above DefaultBackoffMax: max follows initial
	} {
		if err := tb.hub.Forward("#", tb.mem, opt, hub.WithName("r"+string(rune('0'+i)))); err != nil {
			t.Fatalf("option %d: %v", i, err)
		}
	}
	if err := tb.hub.Forward("#", tb.mem, hub.WithRetry(1, time.Hour, time.Second), hub.WithName("bad")); hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("max below initial: got %v, want InvalidArgument", err)
	}
}
