package watermill

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/koder/eventhub/hub"
)

// ErrorCoder classifies an error a Watermill Publisher returned. Publishers report
// failures in their own types (or only in messages); a broker binding that knows them
// (package natsjs) supplies its table, and DefaultErrorCode covers the rest.
type ErrorCoder func(err error) hub.ErrorCode

// DefaultErrorCode classifies what every Go network client shares: an error already
// carrying a hub code keeps it; context errors are Canceled and DeadlineExceeded;
// connection refused, reset or aborted, a network timeout, a dial failure and an
// unexpected EOF are Unavailable (the broker is not there right now); anything else is
// Unknown, which the hub also retries.
func DefaultErrorCode(err error) hub.ErrorCode {
	switch {
	case err == nil:
		return hub.OK
	case hub.Code(err) != hub.Unknown:
		return hub.Code(err)
	case errors.Is(err, context.Canceled):
		return hub.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return hub.DeadlineExceeded
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return hub.Unavailable
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return hub.Unavailable
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return hub.Unavailable
	}
	return hub.Unknown
}

// classify wraps a Publish error with its code; context errors pass unwrapped.
func classify(code ErrorCoder, err error) error {
	if err == nil {
		return nil
	}
	c := code(err)
	if c == hub.Canceled || c == hub.DeadlineExceeded {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	if hub.Code(err) == c {
		return err
	}
	return hub.Wrap(c, err)
}
