package auth

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/problem"
)

// The package's typed errors carry what an HTTP layer needs beyond the code (the field
// at fault, the Retry-After, the docs section) and classify through hub.Code, so callers
// branch on the code and never on the message.

// UnauthenticatedError: no valid credential (missing, malformed, unknown, revoked,
// expired, bad signature). Listeners answer 401 with a WWW-Authenticate challenge.
// Messages say what was wrong with the credential, never which part of a secret
// mismatched.
type UnauthenticatedError struct {
	Msg    string
	Anchor string // docs/security.md section
	Err    error  // cause, kept for errors.Is/As (never shown to the caller)
}

func (e *UnauthenticatedError) Error() string         { return e.Msg }
func (e *UnauthenticatedError) Unwrap() error         { return e.Err }
func (e *UnauthenticatedError) HubCode() int          { return int(hub.Unauthenticated) }
func (e *UnauthenticatedError) ProblemAnchor() string { return e.Anchor }

// Is matches hub.ErrUnauthenticated.
func (e *UnauthenticatedError) Is(target error) bool { return target == hub.ErrUnauthenticated }

func unauthenticated(anchor, msg string, cause error) error {
	return &UnauthenticatedError{Msg: msg, Anchor: anchor, Err: cause}
}

// DeniedError: a valid credential that may not do this (another tenant's event, a type
// outside its patterns, a missing scope, a cross-site or rebinding request). 403.
type DeniedError struct {
	Msg    string
	Field  string // the request part at fault ("tenantid", "type", "Origin"), or ""
	Anchor string
}

func (e *DeniedError) Error() string         { return e.Msg }
func (e *DeniedError) HubCode() int          { return int(hub.PermissionDenied) }
func (e *DeniedError) ProblemField() string  { return e.Field }
func (e *DeniedError) ProblemAnchor() string { return e.Anchor }

// Is matches hub.ErrPermissionDenied.
func (e *DeniedError) Is(target error) bool { return target == hub.ErrPermissionDenied }

// RateLimitError: a rate or concurrency limit refused the request. 429 with
// Retry-After (rate limits) or 503 (the concurrency limit: the server's capacity, not the
// caller's quota).
type RateLimitError struct {
	Msg        string
	RetryAfter time.Duration // when a retry can succeed; 0 if unknown
	Overloaded bool          // the concurrency limit, not a rate
}

func (e *RateLimitError) Error() string { return e.Msg }
func (e *RateLimitError) HubCode() int {
	if e.Overloaded {
		return int(hub.Unavailable)
	}
	return int(hub.ResourceExhausted)
}
func (e *RateLimitError) ProblemAnchor() string { return "rate-limits" }

// Is matches hub.ErrResourceExhausted (or hub.ErrUnavailable when Overloaded).
func (e *RateLimitError) Is(target error) bool {
	if e.Overloaded {
		return target == hub.ErrUnavailable
	}
	return target == hub.ErrResourceExhausted
}

// RetryAfterSeconds is the Retry-After header value: whole seconds, rounded up, at
// least 1 (a client that retries at once would only be refused again).
func RetryAfterSeconds(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return strconv.FormatInt(s, 10)
}

// WriteError answers err as a problem document, with the headers its type calls for:
// WWW-Authenticate on 401 (realm names the listener), Retry-After on 429 and 503 from
// a limiter (none when no retry can succeed: a batch larger than the burst). Listeners
// call it for every error the package returns.
func WriteError(w http.ResponseWriter, realm string, err error) {
	var ue *UnauthenticatedError
	if errors.As(err, &ue) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm+`"`)
	}
	var re *RateLimitError
	if errors.As(err, &re) && re.RetryAfter > 0 {
		w.Header().Set("Retry-After", RetryAfterSeconds(re.RetryAfter))
	}
	problem.WriteError(w, err)
}
