package webhook

import (
	"context"
	"errors"
	"net/http"

	"github.com/koder/eventhub/hub"
)

// outcome is what one attempt's result does to the delivery.
type outcome int

const (
	// delivered: 2xx, the delivery is done.
	delivered outcome = iota
	// retry: the attempt failed; retried per the schedule, dead after the last one.
	retry
	// gone: 410, the receiver asks to stop; the endpoint is disabled and the delivery
	// dead at once (Standard Webhooks).
	gone
	// blocked: the SSRF guard refused the address; dead at once (retrying would only
	// knock on the same internal address again). The endpoint stays enabled so an
	// operator can fix its DNS or the allow-list and resend.
	blocked
	// invalid: the stored event cannot be encoded; dead at once (no attempt can succeed).
	invalid
)

func (o outcome) String() string {
	return [...]string{"delivered", "retry", "gone", "blocked", "invalid"}[o]
}

// statusClass is one row of the response table.
type statusClass struct {
	code       hub.ErrorCode
	outcome    outcome
	retryAfter bool // honour the Retry-After header
}

// classifyStatus is the private table from a receiver's HTTP status to a hub code and
// an outcome. Every non-2xx status except 410 is retried: Stripe and Svix retry any
// non-2xx, and a receiver's 4xx is as often a deployment in progress (404 before the
// route exists, 401 while its secret is being rotated) as a final verdict; the 5 retries
// are cheap and a dead delivery can be resent. Pinned by TestErrorCode.
func classifyStatus(status int) statusClass {
	switch {
	case status >= 200 && status <= 299:
		return statusClass{hub.OK, delivered, false}
	case status >= 300 && status <= 399:
		// RFC 9110 §15.4; no redirect is followed (H4, Standard Webhooks: 3xx = failure).
		return statusClass{hub.FailedPrecondition, retry, false}
	}
	switch status {
	case http.StatusGone: // 410, Standard Webhooks: disable the endpoint
		return statusClass{hub.NotFound, gone, false}
	case http.StatusTooManyRequests: // 429, RFC 6585 §4: Retry-After may say when
		return statusClass{hub.ResourceExhausted, retry, true}
	case http.StatusServiceUnavailable: // 503, RFC 9110 §15.6.4: Retry-After may say when
		return statusClass{hub.Unavailable, retry, true}
	case http.StatusBadGateway, http.StatusGatewayTimeout: // a proxy in front of the receiver
		return statusClass{hub.Unavailable, retry, false}
	case http.StatusRequestTimeout: // 408
		return statusClass{hub.DeadlineExceeded, retry, false}
	case http.StatusUnauthorized, http.StatusForbidden: // 401, 403: usually a secret mismatch
		return statusClass{hub.PermissionDenied, retry, false}
	case http.StatusNotFound: // 404
		return statusClass{hub.NotFound, retry, false}
	case http.StatusRequestEntityTooLarge: // 413
		return statusClass{hub.ResourceExhausted, retry, false}
	}
	switch {
	case status >= 400 && status <= 499:
		return statusClass{hub.InvalidArgument, retry, false}
	case status >= 500 && status <= 599:
		return statusClass{hub.Internal, retry, false}
	}
	return statusClass{hub.Unknown, retry, false} // 1xx final or nonsense
}

// classifyErr maps a failed round trip (no response) to a code and an outcome.
func classifyErr(err error) (hub.ErrorCode, outcome) {
	var he *hub.Error
	switch {
	case errors.As(err, &he) && he.Code == hub.PermissionDenied:
		return hub.PermissionDenied, blocked // the SSRF guard (dialer or Control hook)
	case errors.Is(err, context.DeadlineExceeded):
		return hub.DeadlineExceeded, retry // the per-attempt timeout
	case errors.Is(err, context.Canceled):
		return hub.Canceled, retry // shutdown: the ledger runs it again
	}
	return hub.Unavailable, retry // refused, reset, DNS failure, TLS error
}
