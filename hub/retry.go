package hub

import (
	"math/rand/v2"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
)

// retryMiddleware makes up to cfg.attempts attempts, retrying only while
// IsRetryable(err): a bad event or a closed transport fails at once. Between attempts it
// waits an exponential backoff (initial, doubling, capped, ±20% jitter) unless the
// delivery is cancelled (Close timed out).
//
// Hand-written rather than Watermill's middleware.Retry: that one counts retries, not
// attempts, evaluates ShouldRetry with a NextBackOff() call that consumes a backoff step
// (so the waits skip ahead), and does not expose the attempt count the failure event
// reports.
func (r *route) retryMiddleware(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		d := deliveryFrom(msg.Context())
		wait := r.cfg.backoffInitial
		for {
			d.attempts++
			out, err := h(msg)
			if err == nil || d.attempts >= r.cfg.attempts || !IsRetryable(err) {
				return out, err
			}
			timer := time.NewTimer(jitter(wait))
			select {
			case <-timer.C:
			case <-msg.Context().Done():
				timer.Stop()
				return out, err
			}
			wait = min(2*wait, r.cfg.backoffMax)
		}
	}
}

// jitter spreads d by ±20% so routes failing together do not retry in lockstep.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}
