package ledger

import (
	"strings"
	"testing"
	"time"
)

// TestValidateReportsEveryProblem: one call names every invalid field, one joined error
// each, so a config checker can point at all of them.
func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	c := Config{FetchCooldown: time.Microsecond, MaxConns: -1, BusyTimeout: -time.Second, DSN: "redis://x"}.WithDefaults()
	err := c.Validate()
	parts, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("Validate = %v, want a joined error", err)
	}
	if got := len(parts.Unwrap()); got != 4 {
		t.Fatalf("Validate reported %d problems, want 4:\n%v", got, err)
	}
	for _, field := range []string{"FetchCooldown", "MaxConns", "BusyTimeout", "DSN"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("%s is not reported:\n%v", field, err)
		}
	}
}
