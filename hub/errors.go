package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrorCode classifies an error so that callers (and the hub's own retry logic) branch on
// a stable number instead of a message. The names follow gRPC; the numbers never change
// and are never reused.
type ErrorCode int

const (
	OK                 ErrorCode = 0
	Unknown            ErrorCode = 2
	InvalidArgument    ErrorCode = 3
	DeadlineExceeded   ErrorCode = 4
	NotFound           ErrorCode = 5
	AlreadyExists      ErrorCode = 6
	PermissionDenied   ErrorCode = 7
	ResourceExhausted  ErrorCode = 8
	FailedPrecondition ErrorCode = 9
	Internal           ErrorCode = 13
	Unavailable        ErrorCode = 14
	Canceled           ErrorCode = 1
	// Unauthenticated: the request carries no valid credentials (a missing, unknown,
	// revoked or expired key or token). PermissionDenied is for a known caller who may
	// not do this; HTTP layers answer 401 and 403 respectively.
	Unauthenticated ErrorCode = 16
)

var codeNames = map[ErrorCode]string{
	OK: "OK", Unknown: "Unknown", InvalidArgument: "InvalidArgument", DeadlineExceeded: "DeadlineExceeded",
	NotFound: "NotFound", AlreadyExists: "AlreadyExists", PermissionDenied: "PermissionDenied",
	ResourceExhausted: "ResourceExhausted", FailedPrecondition: "FailedPrecondition",
	Internal: "Internal", Unavailable: "Unavailable", Canceled: "Canceled",
	Unauthenticated: "Unauthenticated",
}

func (c ErrorCode) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// Sentinels, one per code, for errors.Is: errors.Is(err, hub.ErrUnavailable).
var (
	ErrUnknown            = &Error{Code: Unknown}
	ErrInvalidArgument    = &Error{Code: InvalidArgument}
	ErrDeadlineExceeded   = &Error{Code: DeadlineExceeded}
	ErrNotFound           = &Error{Code: NotFound}
	ErrAlreadyExists      = &Error{Code: AlreadyExists}
	ErrPermissionDenied   = &Error{Code: PermissionDenied}
	ErrResourceExhausted  = &Error{Code: ResourceExhausted}
	ErrFailedPrecondition = &Error{Code: FailedPrecondition}
	ErrInternal           = &Error{Code: Internal}
	ErrUnavailable        = &Error{Code: Unavailable}
	ErrCanceled           = &Error{Code: Canceled}
	ErrUnauthenticated    = &Error{Code: Unauthenticated}
)

// Error is an error with a code. Transports wrap native errors in it through their
// private tables (see each transport's errors.go), so the hub never reads messages.
type Error struct {
	Code ErrorCode
	Msg  string
	Err  error // the native error, kept for errors.As
}

// Errorf builds an *Error. A %w verb in format keeps the wrapped error reachable.
func Errorf(code ErrorCode, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// Wrap attaches a code to err; nil stays nil and context errors pass through unwrapped.
func Wrap(code ErrorCode, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) {
		return err
	}
	return &Error{Code: code, Msg: err.Error(), Err: err}
}

func (e *Error) Error() string {
	if e.Msg == "" {
		return "hub: " + e.Code.String()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, hub.ErrXxx) match any *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Msg == "" && t.Err == nil && t.Code == e.Code
}

// Coder is implemented by typed errors of other packages (schema, cloudevent) so that
// Code classifies them without hub importing their internals.
type Coder interface{ HubCode() int }

// Code classifies err the way gcerrors.Code does: nil is OK, context errors map to
// Canceled and DeadlineExceeded, a coded error to its code, anything else to Unknown.
func Code(err error) ErrorCode {
	if err == nil {
		return OK
	}
	var he *Error
	if errors.As(err, &he) {
		return he.Code
	}
	var c Coder
	if errors.As(err, &c) {
		return ErrorCode(c.HubCode())
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return DeadlineExceeded
	}
	return Unknown
}

// IsRetryable reports whether sending again may succeed. Only transient codes qualify:
// a bad event or a closed transport stays bad however often it is sent.
func IsRetryable(err error) bool {
	switch Code(err) {
	case Unavailable, DeadlineExceeded, ResourceExhausted, Unknown, Internal:
		return true
	}
	return false
}
