package webhook

import (
	"net/http"
	"testing"
	"time"
)

func TestH3_RetrySchedule(t *testing.T) {
	t.Parallel()
	t.Run("DefaultIs1m5m30m2h12h", func(t *testing.T) {
		t.Parallel()
		want := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}
		var c Config
		c.setDefaults()
		if len(c.RetrySchedule) != len(want) {
			t.Fatalf("schedule %v, want %v", c.RetrySchedule, want)
		}
		p := retryPolicy{schedule: c.RetrySchedule}
		for i, w := range want {
			if got := p.delay(i+1, 0); got != w {
				t.Fatalf("delay after attempt %d = %s, want %s", i+1, got, w)
			}
		}
		if p.maxAttempts() != 6 {
			t.Fatalf("maxAttempts = %d, want 6", p.maxAttempts())
		}
	})
	t.Run("JitterStaysWithinFraction", func(t *testing.T) {
		t.Parallel()
		p := retryPolicy{schedule: DefaultRetrySchedule, jitter: 0.2}
		for range 1000 {
			d := p.delay(1, 0)
			if d < 48*time.Second || d > 72*time.Second {
				t.Fatalf("jittered 1m = %s, want within ±20%%", d)
			}
		}
	})
	t.Run("RetryAfterRaisesTheWaitWithinTheCap", func(t *testing.T) {
		t.Parallel()
		p := retryPolicy{schedule: DefaultRetrySchedule, maxRetryAfter: time.Hour}
		if got := p.delay(1, 10*time.Minute); got != 10*time.Minute {
			t.Fatalf("Retry-After 10m over 1m = %s, want 10m", got)
		}
		if got := p.delay(1, 30*time.Second); got != time.Minute {
			t.Fatalf("Retry-After 30s under 1m = %s, want the schedule's 1m", got)
		}
		if got := p.delay(1, 48*time.Hour); got != time.Hour {
			t.Fatalf("Retry-After 48h = %s, want the 1h cap", got)
		}
	})
	t.Run("ParseRetryAfter", func(t *testing.T) {
		t.Parallel()
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		cases := map[string]time.Duration{
			"":     0,
			"0":    0,
			"-5":   0,
			"120":  2 * time.Minute,
			"soon": 0,
			now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
			now.Add(-time.Hour).Format(http.TimeFormat):       0,
		}
		for in, want := range cases {
			if got := parseRetryAfter(in, now); got != want {
				t.Fatalf("parseRetryAfter(%q) = %s, want %s", in, got, want)
			}
		}
	})
}
