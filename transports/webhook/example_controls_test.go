package webhook_test

import (
	"context"
	"fmt"
	"log"

	"github.com/koder/eventhub/transports/webhook"
)

// An endpoint migrated from a Stripe-style provider: only pro-plan events, the
// receiver's old credentials header, Stripe's signature header, at most 20 requests a
// second, one customer's events in order.
func ExampleTransport_CreateEndpoint_controls() {
	var tr *webhook.Transport // from webhook.New
	ep, err := tr.CreateEndpoint(context.Background(), webhook.EndpointSpec{
		URL:      "https://billing.example.com/hooks",
		Patterns: []string{"billing.#"},
		Controls: webhook.Controls{
			Filter:    "data.plan = 'pro'",
			Headers:   map[string]string{"Authorization": "Bearer t0k3n"},
			Signature: webhook.Signature{Scheme: webhook.SchemeStripe},
			RateLimit: webhook.RateLimit{RPS: 20, Burst: 5},
			Ordering:  webhook.Ordering{Enabled: true, Key: "subject", OnDead: webhook.OnDeadHold},
		},
	})
	if err != nil {
		log.Fatal(err) // a bad filter or a reserved header: InvalidArgument naming the field
	}
	fmt.Println(ep.ID)
}
