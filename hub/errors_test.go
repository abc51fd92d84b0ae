package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
)

type coded struct{ code int }

func (c coded) Error() string { return "coded" }
func (c coded) HubCode() int  { return c.code }

func TestErrorCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		err       error
		want      ErrorCode
		retryable bool
	}{
		{"Nil", nil, OK, false},
		{"Canceled", context.Canceled, Canceled, false},
		{"DeadlineExceeded", context.DeadlineExceeded, DeadlineExceeded, true},
		{"WrappedCanceled", fmt.Errorf("send: %w", context.Canceled), Canceled, false},
		{"Plain", errors.New("boom"), Unknown, true},
		{"EOF", io.EOF, Unknown, true},
		{"Error", &Error{Code: Unavailable, Msg: "down"}, Unavailable, true},
		{"Errorf", Errorf(FailedPrecondition, "closed"), FailedPrecondition, false},
		{"ErrorfWrapping", Errorf(NotFound, "no stream: %w", io.ErrUnexpectedEOF), NotFound, false},
		{"WrappedError", fmt.Errorf("route crm: %w", Errorf(ResourceExhausted, "full")), ResourceExhausted, true},
		{"Wrap", Wrap(PermissionDenied, errors.New("NOPERM")), PermissionDenied, false},
		{"WrapKeepsContextErrors", Wrap(Internal, context.Canceled), Canceled, false},
		{"Sentinel", ErrInvalidArgument, InvalidArgument, false},
		{"Coder", coded{3}, InvalidArgument, false},
		{"WrappedCoder", fmt.Errorf("schema: %w", coded{8}), ResourceExhausted, true},
		{"Internal", Errorf(Internal, "bug"), Internal, true},
		{"AlreadyExists", Errorf(AlreadyExists, "dup"), AlreadyExists, false},
		{"Unauthenticated", Errorf(Unauthenticated, "no key"), Unauthenticated, false},
		{"UnauthenticatedSentinel", ErrUnauthenticated, Unauthenticated, false},
	}
	for _, c := range cases {
		if got := Code(c.err); got != c.want {
			t.Errorf("%s: Code = %v, want %v", c.name, got, c.want)
		}
		if got := IsRetryable(c.err); got != c.retryable {
			t.Errorf("%s: IsRetryable = %v, want %v", c.name, got, c.retryable)
		}
	}

	t.Run("SentinelsMatchByCode", func(t *testing.T) {
		err := fmt.Errorf("x: %w", Errorf(Unavailable, "redis down"))
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInternal) {
			t.Fatal("errors.Is must match the sentinel of the same code only")
		}
		if Wrap(Internal, nil) != nil {
			t.Fatal("Wrap(nil) must be nil")
		}
		if !errors.Is(Errorf(NotFound, "no: %w", io.ErrUnexpectedEOF), io.ErrUnexpectedEOF) {
			t.Fatal("Errorf with %w must keep the wrapped error reachable")
		}
	})

	t.Run("Names", func(t *testing.T) {
		if Unavailable.String() != "Unavailable" || ErrorCode(99).String() != "ErrorCode(99)" {
			t.Fatalf("names: %s %s", Unavailable, ErrorCode(99))
		}
		// The numbers are gRPC's and never change: clients may have stored them.
		if Unauthenticated != 16 || Unauthenticated.String() != "Unauthenticated" {
			t.Fatalf("Unauthenticated = %d %s, want 16 Unauthenticated", int(Unauthenticated), Unauthenticated)
		}
	})
}
