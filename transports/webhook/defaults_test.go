package webhook

import (
	"testing"
	"time"
)

// WithDefaults is what New applies, on a copy: set fields stay, unset ones get the
// defaults, and the receiver is untouched.
func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	in := Config{Workers: 7}
	got := in.WithDefaults()
	if in.AttemptTimeout != 0 || in.RetrySchedule != nil || in.Logger != nil {
		t.Fatalf("WithDefaults changed its receiver: %+v", in)
	}
	if got.Workers != 7 || got.Queue != DefaultQueue || got.AttemptTimeout != DefaultAttemptTimeout ||
		len(got.RetrySchedule) != len(DefaultRetrySchedule) || got.Mode != DefaultMode ||
		got.BreakerPause != DefaultBreakerPause || got.CacheTTL != DefaultCacheTTL || got.Logger == nil {
		t.Fatalf("defaults not applied: %+v", got)
	}
	if got.jobTimeout() <= DefaultAttemptTimeout || got.jobTimeout() > DefaultAttemptTimeout+10*time.Second {
		t.Fatalf("job timeout %s from the default attempt timeout", got.jobTimeout())
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}
