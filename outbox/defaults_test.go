package outbox

import (
	"testing"
	"time"
)

// WithDefaults is what New applies, on a copy: set fields stay, unset ones get the
// defaults, and the receiver is untouched.
func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	in := Config{BackoffBase: time.Hour, Jitter: -1}
	got := in.WithDefaults()
	if in.Workers != 0 || in.Jitter != -1 {
		t.Fatalf("WithDefaults changed its receiver: %+v", in)
	}
	if got.Queue != DefaultQueue || got.Workers != DefaultWorkers || got.MaxAttempts != DefaultMaxAttempts ||
		got.BackoffBase != time.Hour || got.BackoffMax != time.Hour || got.Jitter != 0 {
		t.Fatalf("defaults not applied: %+v", got)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}
