package redisstream

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	streamloop "github.com/koder/eventhub/internal/streams"
)

// redisErr builds a server error reply the way go-redis surfaces it.
type redisErr string

func (e redisErr) Error() string { return string(e) }
func (redisErr) RedisError()     {}

func TestErrorCode(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	cases := []struct {
		name string
		err  error
		want hub.ErrorCode
	}{
		{"Nil", nil, hub.OK},
		{"ConnectionRefused", refused, hub.Unavailable},
		{"Timeout", timeout, hub.Unavailable},
		{"EOF", io.EOF, hub.Unavailable},
		{"UnexpectedEOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), hub.Unavailable},
		{"Reset", syscall.ECONNRESET, hub.Unavailable},
		{"Loading", redisErr("LOADING Redis is loading the dataset in memory"), hub.Unavailable},
		{"ReadOnly", redisErr("READONLY You can't write against a read only replica."), hub.Unavailable},
		{"OOM", redisErr("OOM command not allowed when used memory > 'maxmemory'."), hub.ResourceExhausted},
		{"NoAuth", redisErr("NOAUTH Authentication required."), hub.PermissionDenied},
		{"WrongPass", redisErr("WRONGPASS invalid username-password pair or user is disabled."), hub.PermissionDenied},
		{"Unauthenticated", redisErr("ERR Protocol error: unauthenticated multibulk length"), hub.PermissionDenied},
		{"NoPerm", redisErr("NOPERM this user has no permissions to run the 'xadd' command"), hub.PermissionDenied},
		{"NoGroup", redisErr("NOGROUP No such key 's' or consumer group 'g'"), hub.NotFound},
		{"BusyGroup", redisErr("BUSYGROUP Consumer Group name already exists"), hub.AlreadyExists},
		{"WrongType", redisErr("WRONGTYPE Operation against a key holding the wrong kind of value"), hub.FailedPrecondition},
		{"GenericErr", redisErr("ERR syntax error"), hub.Unknown},
		{"UnknownReply", redisErr("WHATEVER new error"), hub.Unknown},
		{"RedisNil", redis.Nil, hub.NotFound},
		{"ClientClosed", redis.ErrClosed, hub.FailedPrecondition},
		{"PoolTimeout", redis.ErrPoolTimeout, hub.ResourceExhausted},
		{"UntrustedCert", x509.UnknownAuthorityError{}, hub.PermissionDenied},
		{"Canceled", context.Canceled, hub.Canceled},
		{"Deadline", context.DeadlineExceeded, hub.DeadlineExceeded},
		{"Plain", errors.New("something"), hub.Unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := classify(tc.err)
			if got := hub.Code(err); got != tc.want {
				t.Fatalf("Code(classify(%v)) = %v, want %v", tc.err, got, tc.want)
			}
			if tc.err != nil && !errors.Is(err, tc.err) && tc.name != "UntrustedCert" {
				t.Fatalf("classify lost the native error: %v", err)
			}
		})
	}
	t.Run("ContextErrorsPassUnwrapped", func(t *testing.T) {
		t.Parallel()
		if err := classify(context.Canceled); err != context.Canceled {
			t.Fatalf("got %#v", err)
		}
	})
	t.Run("NoGroupMarksReadErrors", func(t *testing.T) {
		t.Parallel()
		err := readError(redisErr("NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option"))
		if !errors.Is(err, streamloop.ErrNoGroup) || hub.Code(err) != hub.NotFound {
			t.Fatalf("readError: %v (code %v)", err, hub.Code(err))
		}
	})
}
