package hub_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
)

// r2Transport stands for a stream transport writing R2 entries: it cannot carry an
// event without a subject (hub.SubjectRequirer) and records what it is sent.
type r2Transport struct {
	mu   sync.Mutex
	sent []*cloudevent.Event
	ch   chan struct{}
}

func newR2Transport() *r2Transport { return &r2Transport{ch: make(chan struct{}, 100)} }

func (r *r2Transport) Send(_ context.Context, batch []*cloudevent.Event) error {
	r.mu.Lock()
	for _, ev := range batch {
		r.sent = append(r.sent, ev.Clone())
	}
	r.mu.Unlock()
	r.ch <- struct{}{}
	return nil
}

func (r *r2Transport) Close() error          { return nil }
func (r *r2Transport) RequiresSubject() bool { return true }
func (r *r2Transport) Name() string          { return "r2" }

// TestR2_PublishRefusesEventWithoutSubject: an event routed to a transport that needs a
// subject, without one, is refused by Publish before anything is sent, with a
// ValidationError on "subject" that names the route; a route default subject lets it
// through on that route only.
func TestR2_PublishRefusesEventWithoutSubject(t *testing.T) {
	t.Parallel()
	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r2 := newR2Transport()
		if err := b.hub.Forward("user.#", r2, hub.WithName("events:user.#")); err != nil {
			t.Fatal(err)
		}
		local := newCollector()
		b.hub.Subscribe("#", local.handle)
		err := b.hub.Publish(context.Background(), event("user.created"))
		var ve *cloudevent.ValidationError
		if hub.Code(err) != hub.InvalidArgument || !errors.As(err, &ve) || len(ve.Problems) != 1 ||
			ve.Problems[0].Field != "subject" || !strings.Contains(ve.Problems[0].Message, `"events:user.#"`) {
			t.Fatalf("Publish = %v, want one InvalidArgument problem on subject naming the route", err)
		}
		if n := len(local.evs); n != 0 {
			t.Fatalf("a refused event reached %d subscribers", n)
		}
		// Other types, and events with a subject, pass.
		if err := b.hub.Publish(context.Background(), event("order.created"), event("user.created").SetSubject("u1")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("BatchNamesTheIndex", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if err := b.hub.Forward("#", newR2Transport()); err != nil {
			t.Fatal(err)
		}
		err := b.hub.Publish(context.Background(), event("a.b").SetSubject("s"), event("a.c"))
		var ve *cloudevent.ValidationError
		if !errors.As(err, &ve) || !ve.Has("[1].subject") || len(ve.Problems) != 1 {
			t.Fatalf("Publish = %v, want a problem on [1].subject", err)
		}
	})
	t.Run("RouteDefault", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r2 := newR2Transport()
		if err := b.hub.Forward("#", r2, hub.WithDefaultSubject("unspecified")); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Forward("#", b.mem); err != nil {
			t.Fatal(err)
		}
		local := newCollector()
		b.hub.Subscribe("#", local.handle)
		ev := event("user.created")
		if err := b.hub.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		<-r2.ch
		if got := r2.sent[0].Subject; got != "unspecified" {
			t.Fatalf("the R2 route sent subject %q, want its default", got)
		}
		if ev.Subject != "" || local.next(t).Subject != "" {
			t.Fatal("the route default leaked to the caller's event or to subscribers")
		}
		testenv.WaitFor(t, 10*time.Second, "the memtransport copy", func() bool { return b.broker.Len(b.stream) == 1 })
		if got := b.broker.Events(b.stream)[0].Subject; got != "" {
			t.Fatalf("another route got subject %q, want none", got)
		}
		withSubject := event("user.created").SetSubject("u1")
		if err := b.hub.Publish(context.Background(), withSubject); err != nil {
			t.Fatal(err)
		}
		<-r2.ch
		if got := r2.sent[1].Subject; got != "u1" {
			t.Fatalf("the default replaced the event's own subject: %q", got)
		}
	})
	t.Run("Outbox", func(t *testing.T) {
		t.Parallel()
		ob := &fakeOutbox{}
		b := setup(t, hub.WithOutbox(ob))
		if err := b.hub.Forward("#", newR2Transport(), hub.WithName("plain"), hub.WithDelivery(hub.OutboxMode)); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Publish(context.Background(), event("a.b")); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("outbox route: Publish = %v, want InvalidArgument", err)
		}
		if err := b.hub.PublishTx(context.Background(), "tx", event("a.b")); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("PublishTx = %v, want InvalidArgument", err)
		}
		if len(ob.items) != 0 {
			t.Fatalf("refused events were stored: %v", ob.destinations())
		}
		ob2 := &fakeOutbox{}
		b2 := setup(t, hub.WithOutbox(ob2))
		if err := b2.hub.Forward("#", newR2Transport(), hub.WithDelivery(hub.OutboxMode), hub.WithDefaultSubject("unspecified")); err != nil {
			t.Fatal(err)
		}
		if err := b2.hub.Publish(context.Background(), event("a.b")); err != nil {
			t.Fatal(err)
		}
		if err := b2.hub.PublishTx(context.Background(), "tx", event("a.b")); err != nil {
			t.Fatal(err)
		}
		if len(ob2.items) != 2 || ob2.items[0].Event.Subject != "unspecified" || ob2.items[1].Event.Subject != "unspecified" {
			t.Fatalf("stored %+v, want two rows with the route's default subject", ob2.items)
		}
	})
	t.Run("NoRequirementNoCheck", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if err := b.hub.Forward("#", b.mem); err != nil {
			t.Fatal(err)
		}
		if err := b.hub.Publish(context.Background(), event("a.b")); err != nil {
			t.Fatalf("a transport that does not require a subject: %v", err)
		}
	})
}
