package webhook

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultRetrySchedule is the wait before each retry (H3): 1 min, 5 min, 30 min, 2 h,
// 12 h, so a delivery is attempted 6 times over ~14.6 h before it is dead. Shorter than
// Svix (~27 h) or Stripe (3 days): a receiver down for longer is better served by a
// bulk resend once it is back than by a trickle of stale retries.
var DefaultRetrySchedule = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}

// retryPolicy turns an attempt number into the next attempt's time.
type retryPolicy struct {
	schedule      []time.Duration
	jitter        float64       // fraction, e.g. 0.2 for ±20 %
	maxRetryAfter time.Duration // cap on a receiver's Retry-After
}

// maxAttempts is the first attempt plus one per schedule entry.
func (p retryPolicy) maxAttempts() int { return len(p.schedule) + 1 }

// delay returns the wait after failed attempt number attempt (1-based), with jitter,
// raised to the receiver's Retry-After hint (429/503) when that is longer; the hint is
// capped so a receiver cannot park a delivery for days. Jitter (uniform ±jitter, Svix's
// ±20 %) spreads the retries of a burst that failed together.
func (p retryPolicy) delay(attempt int, retryAfter time.Duration) time.Duration {
	i := min(max(attempt-1, 0), len(p.schedule)-1)
	d := p.schedule[i]
	if p.jitter > 0 {
		d += time.Duration((rand.Float64()*2 - 1) * p.jitter * float64(d))
	}
	if retryAfter > 0 {
		retryAfter = min(retryAfter, p.maxRetryAfter)
		d = max(d, retryAfter)
	}
	return d
}

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date (RFC 9110
// §10.2.3). Zero when absent or unparsable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	const maxRetryAfter = 365 * 24 * time.Hour // bounds both forms before any cap applies
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}
