package hub_test

import (
	"context"
	"fmt"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// An intake accepts an event id once per tenant: the same event again is a Duplicate
// and is not published, other content under the id a Conflict.
func ExampleNewMemoryEventDeduper() {
	d := hub.NewMemoryEventDeduper(0)
	publish := func(ctx context.Context, fresh []int) error {
		fmt.Println("publish", len(fresh), "event(s)")
		return nil
	}
	ev := cloudevent.New("/shop", "shop.order.placed")
	ev.SetTenantID("acme")
	_ = ev.SetData("", map[string]string{"order": "o1"})
	changed := ev.Clone()
	_ = changed.SetData("", map[string]string{"order": "o2"})
	for _, e := range []*cloudevent.Event{ev, ev.Clone(), changed} {
		as, _ := d.Admit(context.Background(), []hub.EventKey{hub.KeyOf(e)}, 0, publish)
		fmt.Println(as[0])
	}
	// Output:
	// publish 1 event(s)
	// admitted
	// duplicate
	// conflict
}

func ExampleContentDigest() {
	ev := cloudevent.New("/shop", "shop.order.placed")
	ev.SetTenantID("acme")
	ev.Data = []byte(`{"order":"o1"}`)
	pretty := ev.Clone()
	pretty.Data = []byte("{\n  \"order\": \"o1\"\n}")
	fmt.Println(hub.ContentDigest(ev) == hub.ContentDigest(pretty))
	// Output: true
}
