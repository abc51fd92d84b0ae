package hub_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind: a Hub that does not
// stop its router and senders on Close would show up here.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
