package webhook_test

import (
	"context"
	"fmt"
	"log"

	"github.com/koder/eventhub/transports/webhook"
)

// Page through the endpoints, 50 at a time, as an operator's list shows them (no
// secrets).
func ExampleTransport_ListEndpoints() {
	var tr *webhook.Transport // from webhook.New
	ctx := context.Background()
	page := webhook.Page{Limit: 50}
	for {
		views, err := tr.ListEndpoints(ctx, page)
		if err != nil {
			log.Fatal(err)
		}
		for _, v := range views {
			fmt.Println(v.ID, v.URL, v.Types, v.Enabled, v.Secrets)
		}
		if len(views) < page.Limit {
			break
		}
		page.After = views[len(views)-1].ID
	}
}

// The answer to a registration carries the secret, the one time it is shown.
func ExampleEndpoint_ViewWithSecret() {
	var tr *webhook.Transport // from webhook.New
	ep, err := tr.CreateEndpoint(context.Background(), webhook.EndpointSpec{URL: "https://example.com/hooks", Patterns: []string{"identity.#"}})
	if err != nil {
		log.Fatal(err)
	}
	v := ep.ViewWithSecret()
	fmt.Println(v.ID, v.Secret)
}

// Every endpoint's breaker, as every replica sees it.
func ExampleTransport_Status() {
	var tr *webhook.Transport // from webhook.New
	st, err := tr.Status(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range st.Breakers {
		fmt.Println(b.EndpointID, b.State, b.Failures)
	}
}
