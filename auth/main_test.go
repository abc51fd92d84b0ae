package auth

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind (a JWKS refresh
// loop that Close did not stop would show up here).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
