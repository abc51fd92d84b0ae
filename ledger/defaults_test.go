package ledger

import (
	"testing"
	"time"
)

// WithDefaults is what Open applies, on a copy: set fields stay, unset ones get the
// defaults (including the derived ones), and the receiver is untouched.
func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	in := Config{JobTimeout: 2 * time.Minute}
	got := in.WithDefaults()
	if in.FetchCooldown != 0 || in.Logger != nil {
		t.Fatalf("WithDefaults changed its receiver: %+v", in)
	}
	if got.JobTimeout != 2*time.Minute || got.DSN != DefaultDSN || got.FetchCooldown != DefaultFetchCooldown ||
		got.MaxConns != DefaultMaxConns || got.Logger == nil {
		t.Fatalf("defaults not applied: %+v", got)
	}
	if got.RescueStuckJobsAfter != 4*time.Minute {
		t.Fatalf("RescueStuckJobsAfter = %s, want 2 x JobTimeout = 4m", got.RescueStuckJobsAfter)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}
