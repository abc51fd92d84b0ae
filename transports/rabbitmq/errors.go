package rabbitmq

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/hub"
)

// replyCodes is the one table from AMQP 0-9-1 reply codes to hub codes. Each entry cites
// the meaning given in the AMQP 0-9-1 specification (amqp0-9-1.xml, "constants").
var replyCodes = map[int]hub.ErrorCode{
	// 311 content-too-large: "The client attempted to transfer content larger than the
	// server could accept". Sending it again cannot help.
	amqp.ContentTooLarge: hub.InvalidArgument,
	// 312 no-route: a mandatory message could not be routed to any queue.
	amqp.NoRoute: hub.NotFound,
	// 313 no-consumers: an immediate message found no consumer.
	amqp.NoConsumers: hub.NotFound,
	// 320 connection-forced: "An operator intervened to close the connection". The
	// broker or the connection will come back: transient.
	amqp.ConnectionForced: hub.Unavailable,
	// 402 invalid-path: unknown virtual host.
	amqp.InvalidPath: hub.NotFound,
	// 403 access-refused: no permission for the vhost, exchange or queue.
	amqp.AccessRefused: hub.PermissionDenied,
	// 404 not-found: the exchange or queue does not exist.
	amqp.NotFound: hub.NotFound,
	// 405 resource-locked: an exclusive queue owned by another connection.
	amqp.ResourceLocked: hub.FailedPrecondition,
	// 406 precondition-failed: e.g. redeclaring a queue with other arguments.
	amqp.PreconditionFailed: hub.FailedPrecondition,
	// 501-505: framing and protocol violations; a client or server bug.
	amqp.FrameError:      hub.Internal,
	amqp.SyntaxError:     hub.Internal,
	amqp.CommandInvalid:  hub.Internal,
	amqp.ChannelError:    hub.Unavailable, // also amqp.ErrClosed: the channel or connection is gone
	amqp.UnexpectedFrame: hub.Internal,
	// 506 resource-error: "the server could not complete the method because it lacked
	// sufficient resources" (memory or disk alarm, channel limit).
	amqp.ResourceError: hub.ResourceExhausted,
	// 530 not-allowed: the operation is prohibited by the server (e.g. a policy).
	amqp.NotAllowed: hub.FailedPrecondition,
	// 540 not-implemented and 541 internal-error: server side faults.
	amqp.NotImplemented: hub.Internal,
	amqp.InternalError:  hub.Internal,
}

// errNacked is what a basic.nack becomes: RabbitMQ nacks only when "an internal error
// occurs in the Erlang process responsible for a queue", so sending again may succeed.
var errNacked = errors.New("rabbitmq: broker nacked the message (not stored)")

// classify returns the hub code for a native error. Context errors and io.EOF are
// returned by wrap unwrapped, as hub.Wrap does.
func classify(err error) hub.ErrorCode {
	var ae *amqp.Error
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.Is(err, amqp.ErrChannelMax):
		return hub.ResourceExhausted
	case errors.As(err, &ae):
		if c, ok := replyCodes[ae.Code]; ok {
			return c
		}
		return hub.Unknown
	case errors.Is(err, errNacked):
		return hub.Unavailable
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.As(err, &oe), errors.As(err, &ne),
		errors.Is(err, io.ErrUnexpectedEOF):
		// Refused, reset, timed out or unresolvable: the broker is not reachable now.
		return hub.Unavailable
	}
	return hub.Unknown
}

// wrap classifies err through the table; nil, context errors and io.EOF pass through.
func wrap(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var he *hub.Error
	var coder hub.Coder
	if errors.As(err, &he) || errors.As(err, &coder) {
		return err // already classified
	}
	if errors.Is(err, io.EOF) {
		return hub.Wrap(hub.Unavailable, errors.New("rabbitmq: connection closed (EOF)"))
	}
	return hub.Wrap(classify(err), err)
}
