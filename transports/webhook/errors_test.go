package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/koder/eventhub/hub"
)

// TestErrorCode pins the response table (errors.go): which status retries, which ends
// the delivery, which code each maps to.
func TestErrorCode(t *testing.T) {
	t.Parallel()
	statuses := []struct {
		status     int
		code       hub.ErrorCode
		outcome    outcome
		retryAfter bool
	}{
		{200, hub.OK, delivered, false},
		{201, hub.OK, delivered, false},
		{204, hub.OK, delivered, false},
		{299, hub.OK, delivered, false},
		{100, hub.Unknown, retry, false},
		{301, hub.FailedPrecondition, retry, false},
		{302, hub.FailedPrecondition, retry, false},
		{307, hub.FailedPrecondition, retry, false},
		{308, hub.FailedPrecondition, retry, false},
		{400, hub.InvalidArgument, retry, false},
		{401, hub.PermissionDenied, retry, false},
		{403, hub.PermissionDenied, retry, false},
		{404, hub.NotFound, retry, false},
		{405, hub.InvalidArgument, retry, false},
		{408, hub.DeadlineExceeded, retry, false},
		{410, hub.NotFound, gone, false},
		{413, hub.ResourceExhausted, retry, false},
		{422, hub.InvalidArgument, retry, false},
		{429, hub.ResourceExhausted, retry, true},
		{500, hub.Internal, retry, false},
		{501, hub.Internal, retry, false},
		{502, hub.Unavailable, retry, false},
		{503, hub.Unavailable, retry, true},
		{504, hub.Unavailable, retry, false},
		{599, hub.Internal, retry, false},
	}
	for _, c := range statuses {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			got := classifyStatus(c.status)
			if got.code != c.code || got.outcome != c.outcome || got.retryAfter != c.retryAfter {
				t.Fatalf("classifyStatus(%d) = %+v, want {%v %v %v}", c.status, got, c.code, c.outcome, c.retryAfter)
			}
		})
	}
	errs := []struct {
		name    string
		err     error
		code    hub.ErrorCode
		outcome outcome
	}{
		{"SSRF", hub.Errorf(hub.PermissionDenied, "webhook: ssrf: x"), hub.PermissionDenied, blocked},
		{"Timeout", fmt.Errorf("Post: %w", context.DeadlineExceeded), hub.DeadlineExceeded, retry},
		{"Canceled", fmt.Errorf("Post: %w", context.Canceled), hub.Canceled, retry},
		{"Refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, hub.Unavailable, retry},
		{"DNS", &net.DNSError{Err: "no such host", IsNotFound: true}, hub.Unavailable, retry},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			code, out := classifyErr(c.err)
			if code != c.code || out != c.outcome {
				t.Fatalf("classifyErr(%v) = %v, %v; want %v, %v", c.err, code, out, c.code, c.outcome)
			}
		})
	}
}
