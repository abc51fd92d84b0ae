package cloudevent_test

import (
	"fmt"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// TestC1_HubCode pins the numbers cloudevent spells out to avoid importing hub.
func TestC1_HubCode(t *testing.T) {
	t.Parallel()
	_, invalid := cloudevent.ParseJSON([]byte(`{}`))
	for _, tc := range []struct {
		name string
		err  error
		want hub.ErrorCode
	}{
		{"ValidationErrorIsInvalidArgument", invalid, hub.InvalidArgument},
		{"WrappedValidationError", fmt.Errorf("ingress: %w", invalid), hub.InvalidArgument},
		{"TooLargeIsInvalidArgument", &cloudevent.TooLargeError{Limit: 1}, hub.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := hub.Code(tc.err); got != tc.want {
				t.Fatalf("hub.Code = %v, want %v", got, tc.want)
			}
			if hub.IsRetryable(tc.err) {
				t.Fatal("must not be retryable")
			}
		})
	}
}
