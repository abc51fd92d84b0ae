package hub_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/filter"
	"github.com/koder/eventhub/hub"
)

// recordingOutbox keeps what Publish enqueued.
type recordingOutbox struct {
	mu    sync.Mutex
	items []hub.OutboxItem
}

func (o *recordingOutbox) Enqueue(_ context.Context, items []hub.OutboxItem) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.items = append(o.items, items...)
	return nil
}

func (o *recordingOutbox) EnqueueTx(ctx context.Context, _ any, items []hub.OutboxItem) error {
	return o.Enqueue(ctx, items)
}

func planEvent(plan string) *cloudevent.Event {
	ev := cloudevent.New("/test", "subscription.changed").SetTenantID("acme")
	_ = ev.SetData("", map[string]any{"plan": plan})
	return ev
}

// TestDC_RouteFilter: a route's CESQL filter decides before anything is queued (direct
// routes) or stored (outbox routes); a bad expression fails Forward with its position.
func TestDC_RouteFilter(t *testing.T) {
	t.Parallel()

	t.Run("DirectRouteSendsOnlyMatches", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		got := make(chan *cloudevent.Event, 10)
		send := sendFunc(func(_ context.Context, batch []*cloudevent.Event) error {
			for _, ev := range batch {
				got <- ev
			}
			return nil
		})
		if err := tb.hub.Forward("subscription.*", send, hub.WithFilter("tenantid = 'acme' AND data.plan = 'pro'")); err != nil {
			t.Fatal(err)
		}
		free, pro := planEvent("free"), planEvent("pro")
		if err := tb.hub.Publish(context.Background(), free, pro); err != nil {
			t.Fatal(err)
		}
		// One sender delivers in publish order: had "free" been queued, it would come first.
		if ev := <-got; ev.ID != pro.ID {
			t.Fatalf("first delivery %s, want the pro event %s", ev.ID, pro.ID)
		}
	})

	t.Run("OutboxRouteStoresOnlyMatches", func(t *testing.T) {
		t.Parallel()
		ob := &recordingOutbox{}
		tb := setup(t, hub.WithOutbox(ob))
		if err := tb.hub.Forward("#", tb.mem, hub.WithDelivery(hub.OutboxMode), hub.WithFilter("data.plan = 'pro'")); err != nil {
			t.Fatal(err)
		}
		pro := planEvent("pro")
		if err := tb.hub.Publish(context.Background(), planEvent("free"), pro, planEvent("team")); err != nil {
			t.Fatal(err)
		}
		if err := tb.hub.PublishTx(context.Background(), nil, planEvent("free")); err != nil {
			t.Fatal(err)
		}
		if len(ob.items) != 1 || ob.items[0].Event.ID != pro.ID {
			t.Fatalf("outbox got %d items, want only the pro event", len(ob.items))
		}
	})

	t.Run("BadExpressionFailsForward", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		err := tb.hub.Forward("#", tb.mem, hub.WithName("bad"), hub.WithFilter("tenantid = 'acme' AND\n  data.plan = = 'pro'"))
		if hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("got %v, want InvalidArgument", err)
		}
		var fe *filter.Error
		if !errors.As(err, &fe) || fe.Line != 2 || fe.Col != 15 {
			t.Fatalf("got %v, want a filter error at 2:15", err)
		}
		if !strings.Contains(err.Error(), `route "bad"`) {
			t.Fatalf("error %q does not name the route", err)
		}
	})
}
