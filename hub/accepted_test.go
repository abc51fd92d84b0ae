package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

func TestAcceptedAtContext(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t.Run("unset", func(t *testing.T) {
		if _, ok := hub.AcceptedAtFrom(context.Background(), "evt_1"); ok {
			t.Fatal("AcceptedAtFrom reports a time on a bare context")
		}
	})
	t.Run("one_for_all", func(t *testing.T) {
		got, ok := hub.AcceptedAtFrom(hub.WithAcceptedAt(context.Background(), at), "evt_any")
		if !ok || !got.Equal(at) {
			t.Fatalf("got %s %v, want %s true", got, ok, at)
		}
	})
	t.Run("per_event", func(t *testing.T) {
		ctx := hub.WithAcceptedAtByEvent(context.Background(), map[string]time.Time{"evt_1": at})
		if got, ok := hub.AcceptedAtFrom(ctx, "evt_1"); !ok || !got.Equal(at) {
			t.Fatalf("evt_1: got %s %v, want %s true", got, ok, at)
		}
		if _, ok := hub.AcceptedAtFrom(ctx, "evt_2"); ok {
			t.Fatal("evt_2 has no time but AcceptedAtFrom reports one")
		}
	})
}

// TestH6_DirectSendCarriesAcceptTime: a direct route's Send carries, for each event,
// the time Publish queued it, not the time Send runs; a batch that combines events of
// two Publish calls carries each one's own time.
func TestH6_DirectSendCarriesAcceptTime(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	type sent struct {
		ids []string
		at  map[string]time.Time
	}
	sends := make(chan sent, 10)
	started := make(chan struct{})
	release := make(chan struct{})
	first := true
	tr := sendFunc(func(ctx context.Context, batch []*cloudevent.Event) error {
		s := sent{at: map[string]time.Time{}}
		for _, ev := range batch {
			s.ids = append(s.ids, ev.ID)
			if at, ok := hub.AcceptedAtFrom(ctx, ev.ID); ok {
				s.at[ev.ID] = at
			}
		}
		sends <- s
		if first { // one sender per route: no concurrent calls
			first = false
			close(started)
			<-release
		}
		return nil
	})
	if err := tb.hub.Forward("#", tr, hub.WithName("direct"), hub.WithBatchSize(10)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	publish := func(ev *cloudevent.Event) (before, after time.Time) {
		t.Helper()
		before = time.Now()
		if err := tb.hub.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
		return before, time.Now()
	}
	ev1, ev2, ev3 := event("user.created"), event("user.created"), event("user.created")
	b1, a1 := publish(ev1)
	<-started // the sender holds ev1's Send: ev2 and ev3 queue up behind it
	b2, a2 := publish(ev2)
	b3, a3 := publish(ev3)
	close(release)

	check := func(s sent, ev *cloudevent.Event, before, after time.Time) {
		t.Helper()
		at, ok := s.at[ev.ID]
		if !ok {
			t.Fatalf("Send of %v carries no accept time for %s", s.ids, ev.ID)
		}
		if at.Before(before) || at.After(after) {
			t.Fatalf("%s: accept time %s outside its Publish call [%s, %s]", ev.ID, at, before, after)
		}
	}
	s1 := <-sends
	check(s1, ev1, b1, a1)
	s2 := <-sends
	if len(s2.ids) != 2 {
		t.Fatalf("second Send carried %v, want ev2 and ev3 in one batch", s2.ids)
	}
	check(s2, ev2, b2, a2)
	check(s2, ev3, b3, a3)
}
