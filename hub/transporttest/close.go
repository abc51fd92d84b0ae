package transporttest

import (
	"context"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// TestCancelledContext checks that Send with a cancelled context fails with Canceled.
func TestCancelledContext(t *testing.T, h Harness, _ Features) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := h.Transport().Send(ctx, []*cloudevent.Event{NewEvent(1)})
	wantCode(t, "Send with a cancelled context", err, hub.Canceled)
}

// TestSendAfterClose checks that Send on a closed transport fails with
// FailedPrecondition.
func TestSendAfterClose(t *testing.T, h Harness, _ Features) {
	tr := h.Transport()
	if err := tr.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	err := tr.Send(context.Background(), []*cloudevent.Event{NewEvent(1)})
	wantCode(t, "Send after Close", err, hub.FailedPrecondition)
}

// TestDoubleClose checks that Close is idempotent.
func TestDoubleClose(t *testing.T, h Harness, _ Features) {
	tr := h.Transport()
	if err := tr.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := tr.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestUnreachable checks that Send to a destination that is not there fails with
// Unavailable (retryable) within the suite's timeout, and that such a transport closes.
func TestUnreachable(t *testing.T, h Harness, _ Features) {
	tr := h.Unreachable()
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout())
	defer cancel()
	err := tr.Send(ctx, []*cloudevent.Event{NewEvent(1)})
	wantCode(t, "Send to an unreachable destination", err, hub.Unavailable)
	if !hub.IsRetryable(err) {
		t.Fatalf("unreachable error %v is not retryable", err)
	}
	if err := tr.Close(); err != nil {
		t.Fatalf("Close of the unreachable transport: %v", err)
	}
}
