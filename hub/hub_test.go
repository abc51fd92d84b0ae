package hub_test

import (
	"context"
	"errors"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
)

func TestPublish(t *testing.T) {
	t.Parallel()

	t.Run("FillsDefaultsAndStampsContext", func(t *testing.T) {
		t.Parallel()
		b := setup(t, hub.WithValidator(versions{"user.created": "1.4.0"}))
		got := newCollector()
		b.hub.Subscribe("user.#", got.handle)
		ev := &cloudevent.Event{Source: "/svc", Type: "user.created", Data: []byte(`{}`)}
		ctx := hub.WithCorrelationID(hub.WithTenant(context.Background(), "tenant-9"), "corr-1")
		if err := b.hub.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if ev.ID == "" || ev.Time.IsZero() || ev.SpecVersion != "1.0" {
			t.Fatalf("defaults not filled in place: id %q time %v specversion %q", ev.ID, ev.Time, ev.SpecVersion)
		}
		in := got.next(t)
		if in.TenantID() != "tenant-9" || in.CorrelationID() != "corr-1" || in.DataVersion() != "1.4.0" {
			t.Fatalf("stamps: tenant %q correlation %q dataversion %q", in.TenantID(), in.CorrelationID(), in.DataVersion())
		}
		// An event's own values win over the context's.
		own := event("user.created")
		own.SetExtension(cloudevent.ExtCorrelationID, "mine")
		own.SetExtension(cloudevent.ExtDataVersion, "1.0.0")
		if err := b.hub.Publish(ctx, own); err != nil {
			t.Fatal(err)
		}
		in = got.next(t)
		if in.TenantID() != "t1" || in.CorrelationID() != "mine" || in.DataVersion() != "1.0.0" {
			t.Fatalf("own values overwritten: tenant %q correlation %q dataversion %q", in.TenantID(), in.CorrelationID(), in.DataVersion())
		}
	})

	t.Run("InvalidEventFailsAtOnceAndSendsNothing", func(t *testing.T) {
		t.Parallel()
		invalid := errors.New("data.email: required")
		b := setup(t, hub.WithValidator(hub.ValidatorFunc(func(ev *cloudevent.Event) error {
			if ev.Subject == "bad" {
				return hub.Wrap(hub.InvalidArgument, invalid)
			}
			return nil
		})))
		if err := b.hub.Forward("#", b.mem); err != nil {
			t.Fatal(err)
		}
		got := newCollector()
		b.hub.Subscribe("#", got.handle)
		good, bad := event("user.created"), event("user.created")
		bad.Subject = "bad"
		err := b.hub.Publish(context.Background(), good, bad)
		if hub.Code(err) != hub.InvalidArgument || !errors.Is(err, invalid) {
			t.Fatalf("Publish = %v, want the validator's InvalidArgument error", err)
		}
		noTenant := cloudevent.New("/test", "user.created")
		err = b.hub.Publish(context.Background(), noTenant)
		var ve *cloudevent.ValidationError
		if !errors.As(err, &ve) || !ve.Has(cloudevent.ExtTenantID) {
			t.Fatalf("Publish without tenant = %v, want a cloudevent.ValidationError on tenantid", err)
		}
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		if n := b.broker.Len(b.stream); n != 0 || len(got.all()) != 0 {
			t.Fatalf("after a failed Publish: transport got %d, subscribers %d; want 0 and 0", n, len(got.all()))
		}
	})

	t.Run("DirectDeliveryInOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if err := b.hub.Forward("user.*", b.mem); err != nil {
			t.Fatal(err)
		}
		sent := make([]*cloudevent.Event, 200)
		for i := range sent {
			sent[i] = event("user.created")
			if err := b.hub.Publish(context.Background(), sent[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.hub.Publish(context.Background(), event("session.created")); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		got := b.broker.Events(b.stream)
		if len(got) != len(sent) {
			t.Fatalf("transport got %d events, published %d matching", len(got), len(sent))
		}
		for i := range sent {
			if got[i].ID != sent[i].ID {
				t.Fatalf("event %d: got %s, want %s (order lost)", i, got[i].ID, sent[i].ID)
			}
		}
	})

	t.Run("N1_InProcessSubscribersGetEventsWhileTransportIsDown", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.broker.Close() // the broker is down
		if err := b.hub.Forward("user.*", b.mem, fastRetry); err != nil {
			t.Fatal(err)
		}
		local := newCollector()
		b.hub.Subscribe("user.*", local.handle)
		failed := newCollector()
		b.hub.Subscribe("hub.#", failed.handle)
		ev := event("user.created")
		if err := b.hub.Publish(context.Background(), ev); err != nil {
			t.Fatalf("Publish with the transport down = %v, want nil (direct delivery is off the caller's path)", err)
		}
		if got := local.next(t); got.ID != ev.ID {
			t.Fatalf("local subscriber got %s, want %s", got.ID, ev.ID)
		}
		if fe := failed.next(t); fe.Subject != ev.ID {
			t.Fatalf("failure event about %s, want %s", fe.Subject, ev.ID)
		}
	})

	t.Run("AfterCloseFailsWithFailedPrecondition", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if err := b.hub.Close(); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Publish(context.Background(), event("a")); hub.Code(err) != hub.FailedPrecondition {
			t.Fatalf("Publish after Close = %v, want FailedPrecondition", err)
		}
		if err := b.hub.Forward("a", b.mem); hub.Code(err) != hub.FailedPrecondition {
			t.Fatalf("Forward after Close = %v, want FailedPrecondition", err)
		}
		if err := b.hub.Close(); err != nil {
			t.Fatalf("second Close = %v", err)
		}
	})

	t.Run("PanickingSubscriberDoesNotHurtThePublisher", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.hub.Subscribe("#", func(context.Context, *cloudevent.Event) error { panic("subscriber bug") })
		got := newCollector()
		b.hub.Subscribe("#", got.handle)
		if err := b.hub.Publish(context.Background(), event("user.created")); err != nil {
			t.Fatalf("Publish = %v, want nil", err)
		}
		got.next(t)
	})

	t.Run("CopiesEvents", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		got := newCollector()
		b.hub.Subscribe("#", got.handle)
		ev := event("user.created")
		if err := b.hub.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if in := got.next(t); in == ev {
			t.Fatal("subscriber received the caller's pointer, want a copy")
		}
	})
}

func TestForward(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cases := []struct {
		name    string
		pattern string
		tr      hub.Transport
		opts    []hub.RouteOption
		want    hub.ErrorCode
	}{
		{"BadPattern", "a..b", b.mem, nil, hub.InvalidArgument},
		{"NilTransport", "a", nil, nil, hub.InvalidArgument},
		{"ZeroAttempts", "a", b.mem, []hub.RouteOption{hub.WithName("x"), hub.WithRetry(-1, 0, 0)}, hub.InvalidArgument},
		{"ZeroBatch", "a", b.mem, []hub.RouteOption{hub.WithName("y"), hub.WithBatchSize(-1)}, hub.InvalidArgument},
		{"OutboxWithoutOutbox", "a", b.mem, []hub.RouteOption{hub.WithName("z"), hub.WithDelivery(hub.OutboxMode)}, hub.FailedPrecondition},
		{"First", "a", b.mem, nil, hub.OK},
		{"DuplicateName", "b", b.mem, nil, hub.AlreadyExists},
		{"OtherName", "b", b.mem, []hub.RouteOption{hub.WithName("mem-2")}, hub.OK},
	}
	for _, c := range cases {
		if err := b.hub.Forward(c.pattern, c.tr, c.opts...); hub.Code(err) != c.want {
			t.Errorf("%s: Forward = %v, want %v", c.name, err, c.want)
		}
	}
}

// versions is a Validator and VersionSource that accepts everything.
type versions map[string]string

func (versions) Validate(*cloudevent.Event) error { return nil }
func (v versions) Latest(typ string) (string, bool) {
	s, ok := v[typ]
	return s, ok
}

var (
	_ hub.Registry  = versions{}
	_ hub.Transport = (*memtransport.Transport)(nil)
)
