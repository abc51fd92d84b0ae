package hub

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/koder/eventhub/cloudevent"
)

// Each delivery middleware on a stub handler (STYLE rule 10); the chain as a whole is
// exercised by TestF1_DirectDelivery in hub_test.

func stubRoute(t *testing.T) *route {
	t.Helper()
	h, err := New(WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return &route{hub: h, transportName: "stub", cfg: routeConfig{
		name: "stub", attempts: 3, backoffInitial: time.Microsecond, backoffMax: time.Microsecond,
	}}
}

func stubMessage(ctx context.Context) (*message.Message, *delivery) {
	ev := cloudevent.New("/test", "a.b")
	ev.SetExtension(cloudevent.ExtTenantID, "t1")
	d := &delivery{batch: []*cloudevent.Event{ev}}
	msg := message.NewMessage(ev.ID, nil)
	msg.SetContext(context.WithValue(ctx, batchKey{}, d))
	return msg, d
}

// failing returns a handler that fails with errs in turn, then succeeds, counting calls.
func failing(calls *int, errs ...error) message.HandlerFunc {
	return func(*message.Message) ([]*message.Message, error) {
		*calls++
		if *calls <= len(errs) {
			return nil, errs[*calls-1]
		}
		return nil, nil
	}
}

func TestRetryMiddleware(t *testing.T) {
	t.Parallel()
	unavailable := Errorf(Unavailable, "down")
	cases := []struct {
		name      string
		errs      []error
		wantCalls int
		wantCode  ErrorCode
	}{
		{"SucceedsAtOnce", nil, 1, OK},
		{"TransientThenSuccess", []error{unavailable, unavailable}, 3, OK},
		{"AlwaysTransient", []error{unavailable, unavailable, unavailable, unavailable}, 3, Unavailable},
		{"NotRetryable", []error{Errorf(InvalidArgument, "bad")}, 1, InvalidArgument},
		{"ClosedTransport", []error{Errorf(FailedPrecondition, "closed")}, 1, FailedPrecondition},
	}
	r := stubRoute(t)
	for _, c := range cases {
		calls := 0
		msg, d := stubMessage(context.Background())
		_, err := r.retryMiddleware(failing(&calls, c.errs...))(msg)
		if calls != c.wantCalls || d.attempts != c.wantCalls || Code(err) != c.wantCode {
			t.Errorf("%s: calls %d, attempts %d, err %v; want %d calls, code %v", c.name, calls, d.attempts, err, c.wantCalls, c.wantCode)
		}
	}

	t.Run("CancelledDuringBackoff", func(t *testing.T) {
		slow := stubRoute(t)
		slow.cfg.backoffInitial, slow.cfg.backoffMax = time.Hour, time.Hour
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		msg, _ := stubMessage(ctx)
		h := slow.retryMiddleware(func(*message.Message) ([]*message.Message, error) {
			calls++
			cancel()
			return nil, unavailable
		})
		if _, err := h(msg); Code(err) != Unavailable || calls != 1 {
			t.Fatalf("calls %d, err %v; want 1 call and the last error", calls, err)
		}
	})
}

func TestRecovererMiddleware(t *testing.T) {
	t.Parallel()
	msg, _ := stubMessage(context.Background())
	_, err := recovererMiddleware(func(*message.Message) ([]*message.Message, error) { panic("boom") })(msg)
	if Code(err) != Internal || !IsRetryable(err) {
		t.Fatalf("err = %v (code %v), want a retryable Internal error", err, Code(err))
	}
}

func TestFailureMiddleware(t *testing.T) {
	t.Parallel()
	r := stubRoute(t)
	got := make(chan *cloudevent.Event, 1)
	r.hub.Subscribe(TypeTransportFailed, func(_ context.Context, ev *cloudevent.Event) error {
		got <- ev
		return nil
	})
	msg, d := stubMessage(context.Background())
	d.attempts = 3
	_, err := r.failureMiddleware(func(*message.Message) ([]*message.Message, error) {
		return nil, Errorf(Unavailable, "down")
	})(msg)
	if err != nil {
		t.Fatalf("failure middleware returned %v, want nil (the failure event is the record)", err)
	}
	select {
	case fe := <-got:
		if fe.Subject != d.batch[0].ID || fe.TenantID() != "t1" {
			t.Fatalf("failure event subject %q tenant %q", fe.Subject, fe.TenantID())
		}
	default:
		t.Fatal("no failure event dispatched")
	}
	calls := 0
	if _, err := r.failureMiddleware(failing(&calls))(msg); err != nil || len(got) != 0 {
		t.Fatalf("success: err %v, failure events %d; want nil and none", err, len(got))
	}
}

func TestAttemptMiddleware(t *testing.T) {
	t.Parallel()
	r := stubRoute(t)
	msg, d := stubMessage(context.Background())
	orig := msg.Context()
	var seen context.Context
	d.attempts = 1
	_, err := r.attemptMiddleware(func(m *message.Message) ([]*message.Message, error) {
		seen = m.Context()
		return nil, Errorf(Unavailable, "down")
	})(msg)
	if Code(err) != Unavailable {
		t.Fatalf("err = %v, want the handler's", err)
	}
	if seen == orig || msg.Context() != orig {
		t.Fatal("attempt must give the send its own span context and restore the message's")
	}
}
