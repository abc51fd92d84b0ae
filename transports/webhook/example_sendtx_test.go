package webhook_test

import (
	"context"
	"log"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/transports/webhook"
)

// The deliveries of an event written in the producer's own transaction on the
// transport's ledger: they exist if and only if it commits, with no outbox row to
// relay (the outbox does this for webhook routes by itself, outbox.TxSender).
func ExampleTransport_SendTx() {
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{DSN: "sqlite://eventhub.db"})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	tr, err := webhook.New(ctx, webhook.Config{}, l)
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()

	ev := cloudevent.New("/billing", "invoice.paid")
	ev.SetTenantID("acme")
	err = l.InTx(ctx, func(tx any) error {
		// ... the producer's own writes in tx (on SQLite a *sql.Tx from l.DB()) ...
		return tr.SendTx(ctx, tx, []*cloudevent.Event{ev})
	})
	if err != nil {
		log.Fatal(err) // nothing was written: neither the producer's rows nor the deliveries
	}
}
