package dedupe_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/dedupe"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/outbox"
)

// The window on the ledger's database, with the outbox wrapped so that an admitted id
// is recorded in the transaction of its rows.
func Example() {
	dir, _ := os.MkdirTemp("", "dedupe-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	l, err := ledger.Open(ctx, ledger.Config{DSN: "sqlite://" + filepath.Join(dir, "hub.db"), Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer l.Close()
	ob, _ := outbox.New(l, outbox.Config{}, nil) // rows only; a relay elsewhere sends them
	window, err := dedupe.Open(ctx, l, dedupe.Config{Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer window.Close()
	h, _ := hub.New(hub.WithOutbox(dedupe.WrapOutbox(ob)), hub.WithLogger(quiet))
	defer h.Close()
	tr, _ := memtransport.New(memtransport.NewBroker(), memtransport.Config{Stream: "events"})
	_ = h.Forward("#", tr, hub.WithName("events"), hub.WithDelivery(hub.OutboxMode))

	ev := cloudevent.New("/shop", "shop.order.placed")
	ev.SetTenantID("acme")
	for range 2 { // a producer retrying after a lost answer
		as, err := window.Admit(ctx, []hub.EventKey{hub.KeyOf(ev)}, 24*time.Hour, func(ctx context.Context, fresh []int) error {
			return h.Publish(ctx, ev)
		})
		fmt.Println(as[0], err)
	}
	// Output:
	// admitted <nil>
	// duplicate <nil>
}
