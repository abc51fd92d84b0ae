package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/hub"
)

func TestErrorCode(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "x"}}
	cases := []struct {
		err  error
		want hub.ErrorCode
	}{
		{nil, hub.OK},
		{context.Canceled, hub.Canceled},
		{context.DeadlineExceeded, hub.DeadlineExceeded},
		{io.EOF, hub.Unavailable},
		{amqp.ErrClosed, hub.Unavailable},
		{amqp.ErrChannelMax, hub.ResourceExhausted},
		{amqp.ErrCredentials, hub.PermissionDenied},
		{amqp.ErrSASL, hub.PermissionDenied},
		{amqp.ErrVhost, hub.PermissionDenied},
		{&amqp.Error{Code: amqp.ContentTooLarge}, hub.InvalidArgument},
		{&amqp.Error{Code: amqp.NoRoute}, hub.NotFound},
		{&amqp.Error{Code: amqp.NoConsumers}, hub.NotFound},
		{&amqp.Error{Code: amqp.ConnectionForced}, hub.Unavailable},
		{&amqp.Error{Code: amqp.InvalidPath}, hub.NotFound},
		{&amqp.Error{Code: amqp.AccessRefused}, hub.PermissionDenied},
		{&amqp.Error{Code: amqp.NotFound}, hub.NotFound},
		{&amqp.Error{Code: amqp.ResourceLocked}, hub.FailedPrecondition},
		{&amqp.Error{Code: amqp.PreconditionFailed}, hub.FailedPrecondition},
		{&amqp.Error{Code: amqp.FrameError}, hub.Internal},
		{&amqp.Error{Code: amqp.SyntaxError}, hub.Internal},
		{&amqp.Error{Code: amqp.CommandInvalid}, hub.Internal},
		{&amqp.Error{Code: amqp.ChannelError}, hub.Unavailable},
		{&amqp.Error{Code: amqp.UnexpectedFrame}, hub.Internal},
		{&amqp.Error{Code: amqp.ResourceError}, hub.ResourceExhausted},
		{&amqp.Error{Code: amqp.NotAllowed}, hub.FailedPrecondition},
		{&amqp.Error{Code: amqp.NotImplemented}, hub.Internal},
		{&amqp.Error{Code: amqp.InternalError}, hub.Internal},
		{&amqp.Error{Code: 999}, hub.Unknown},
		{errNacked, hub.Unavailable},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), hub.Unavailable},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), hub.Unavailable},
		{refused, hub.Unavailable},
		{&net.DNSError{Err: "no such host", Name: "nowhere.invalid"}, hub.Unavailable},
		{io.ErrUnexpectedEOF, hub.Unavailable},
		{errors.New("something else"), hub.Unknown},
		{hub.Errorf(hub.NotFound, "already coded"), hub.NotFound},
		{&MalformedError{Problems: []string{"x"}}, hub.InvalidArgument},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.err), func(t *testing.T) {
			if got := hub.Code(wrap(c.err)); got != c.want {
				t.Errorf("Code(wrap(%v)) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

func TestErrorCode_ContextErrorsPassUnwrapped(t *testing.T) {
	t.Parallel()
	if err := wrap(context.Canceled); err != context.Canceled {
		t.Fatalf("wrap(Canceled) = %#v, want it unchanged", err)
	}
}
