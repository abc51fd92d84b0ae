package outbox_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/outbox"
)

// An outbox on the embedded SQLite ledger: the order row and its event commit together,
// and the relay delivers the event to the "orders" destination.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "outbox")
	defer os.RemoveAll(dir)

	l, err := ledger.Open(ctx, ledger.Config{DSN: "sqlite://" + filepath.Join(dir, "hub.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	broker := memtransport.NewBroker()
	dest, err := memtransport.New(broker, memtransport.Config{Stream: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	o, err := outbox.New(l, outbox.Config{}, outbox.MapLookup(map[string]hub.Transport{"orders": dest}))
	if err != nil {
		log.Fatal(err)
	}
	if err := l.Start(ctx); err != nil { // the relay runs from here on
		log.Fatal(err)
	}
	if _, err := l.DB().Exec("CREATE TABLE orders (id text PRIMARY KEY)"); err != nil {
		log.Fatal(err)
	}

	ev := cloudevent.New("/shop", "order.created")
	ev.SetTenantID("acme")
	_ = ev.SetData("application/json", map[string]string{"order": "o-1"})

	tx, err := l.DB().BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO orders (id) VALUES (?)", "o-1"); err != nil {
		log.Fatal(err)
	}
	if err := o.EnqueueTx(ctx, tx, []hub.OutboxItem{{Destination: "orders", Event: ev}}); err != nil {
		log.Fatal(err) // and roll back: the order must not exist without its event (O1)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}

	for deadline := time.Now().Add(10 * time.Second); broker.Len("orders") == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // the relay delivers in the background
	}
	fmt.Println(broker.Events("orders")[0].ID == ev.ID)
	// Output: true
}

// Operations as the admin API and CLI call them.
func ExampleOutbox_Stats() {
	ctx := context.Background()
	var o *outbox.Outbox // from outbox.New
	if o == nil {
		return
	}
	stats, _ := o.Stats(ctx)
	for _, s := range stats {
		fmt.Printf("%s pending=%d running=%d dead=%d\n", s.Destination, s.Pending, s.Running, s.Dead)
	}
	dead, _ := o.Dead(ctx, outbox.DeadQuery{Destination: "orders", Limit: 50})
	for _, r := range dead {
		fmt.Println(r.ID, r.EventID, r.LastError())
	}
	_ = o.Resend(ctx, dead[0].ID)             // one row
	_, _ = o.ResendDead(ctx, "orders")        // every dead row of a destination
	_, _ = o.PurgeDead(ctx, "decommissioned") // give up on a destination's dead rows
}

// Wiring the outbox into a hub: the outbox exists before the routes, so the relay looks
// transports up in a Destinations filled as routes are forwarded.
func ExampleDestinations() {
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{DSN: "postgres://postgres@127.0.0.1:5432/app", Schema: "hub"})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	dests := &outbox.Destinations{}
	o, err := outbox.New(l, outbox.Config{}, dests.Lookup)
	if err != nil {
		log.Fatal(err)
	}
	h, err := hub.New(hub.WithOutbox(o))
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	var redis hub.Transport // e.g. redisstream.New(...)
	dests.Set("orders", redis)
	if err := h.Forward("order.*", redis, hub.WithName("orders"), hub.WithDelivery(hub.OutboxMode)); err != nil {
		log.Fatal(err)
	}
	if err := l.Start(ctx); err != nil {
		log.Fatal(err)
	}

	tx, _ := l.Pool().Begin(ctx)
	ev := cloudevent.New("/shop", "order.created").SetTenantID("acme")
	if err := h.PublishTx(ctx, tx, ev); err != nil {
		_ = tx.Rollback(ctx)
		return
	}
	_ = tx.Commit(ctx)
}
