package webhook_test

import (
	"context"
	"fmt"
	"log"

	"github.com/koder/eventhub/transports/webhook"
)

// Page through the dead deliveries of one tenant, newest first, 50 at a time: each
// page is one keyset query below the last id seen, however deep the ledger.
func ExampleTransport_DeliveryPage() {
	var tr *webhook.Transport // from webhook.New
	ctx := context.Background()
	q := webhook.DeliveryQuery{DeliveryFilter: webhook.DeliveryFilter{TenantID: "acme", State: webhook.DeliveryDead}, Type: "billing.#"}
	for {
		page, err := tr.DeliveryPage(ctx, q)
		if err != nil {
			log.Fatal(err)
		}
		for _, d := range page.Deliveries {
			fmt.Println(d.ID, d.EventType, d.LastStatus, d.Reason)
		}
		if page.Next == 0 {
			break
		}
		q.Before = page.Next
	}
}

// Resend everything a filter matches: here every billing delivery of an endpoint
// since an outage began.
func ExampleTransport_ResendMatching() {
	var tr *webhook.Transport // from webhook.New
	n, err := tr.ResendMatching(context.Background(), webhook.DeliveryQuery{
		DeliveryFilter: webhook.DeliveryFilter{EndpointID: "ep_01J..."}, Type: "billing.#"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("resent", n)
}

// A delivery's attempts: status, latency and the first bytes of each response.
func ExampleDelivery_attempts() {
	var tr *webhook.Transport // from webhook.New
	d, err := tr.Delivery(context.Background(), 42)
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range d.Attempts {
		fmt.Println(a.Attempt, a.At, a.Status, a.LatencyMS, a.Response, a.Error)
	}
}

// When did an endpoint's breaker open, probe and close?
func ExampleTransport_BreakerHistory() {
	var tr *webhook.Transport // from webhook.New
	h, err := tr.BreakerHistory(context.Background(), "ep_01J...", 20)
	if err != nil {
		log.Fatal(err)
	}
	for _, tr := range h {
		fmt.Println(tr.At, tr.State, tr.Failures)
	}
}

// Check a receiver end to end with a hub.webhook.test event before real events flow.
func ExampleTransport_SendTest() {
	var tr *webhook.Transport // from webhook.New
	d, err := tr.SendTest(context.Background(), "ep_01J...")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("queued delivery", d.ID)
}

// How many deliveries wait, retry, or are dead, for an overview.
func ExampleTransport_DeliveryCounts() {
	var tr *webhook.Transport // from webhook.New
	n, err := tr.DeliveryCounts(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n[webhook.DeliveryPending], n[webhook.DeliveryRetrying], n[webhook.DeliveryDead])
}
