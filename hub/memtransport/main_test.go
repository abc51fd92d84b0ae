package memtransport_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind: a Consumer whose
// Close does not stop its reader would show up here.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
