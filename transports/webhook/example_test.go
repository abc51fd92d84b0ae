package webhook_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/transports/webhook"
)

// A transport on the embedded SQLite ledger: register an endpoint, send an event, and
// the ledger's workers deliver it (signed, retried, breaker-guarded).
func ExampleNew() {
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
	if err := l.Start(ctx); err != nil { // after New: it registers the worker and queue
		log.Fatal(err)
	}
	ep, err := tr.CreateEndpoint(ctx, webhook.EndpointSpec{
		URL:      "https://receiver.example.com/hooks",
		Patterns: []string{"user.*"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("give the receiver its secret:", ep.Secrets[0].Value)

	ev := cloudevent.New("/identity", "user.created")
	ev.SetTenantID("acme")
	if err := tr.Send(ctx, []*cloudevent.Event{ev}); err != nil {
		log.Fatal(err)
	}
}

// The receiving side in a few lines: verify, parse, handle.
func ExampleNewReceiver() {
	rcv, err := webhook.NewReceiver(webhook.ReceiverConfig{Secrets: []string{"whsec_..."}},
		func(ctx context.Context, ev *cloudevent.Event) error {
			log.Printf("got %s %s for tenant %s", ev.Type, ev.ID, ev.TenantID())
			return nil // an error answers 500 and the sender retries
		})
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/hooks", rcv)
	log.Fatal(http.ListenAndServe(":8080", nil))
}

// Verify is all a receiver in Go needs to check a request by hand.
func ExampleVerify() {
	secret := "whsec_0123456789abcdefghijklmnopqrstuv"
	body := []byte(`{"id":"evt_1","n":1}`)
	at := time.Unix(1700000000, 0)
	header := webhook.Sign(at, body, []byte(secret)) // what the sender put in Eventhub-Signature

	err := webhook.Verify(header, body, [][]byte{[]byte(secret)}, webhook.DefaultTolerance, at.Add(time.Minute))
	fmt.Println("fresh:", err)
	err = webhook.Verify(header, body, [][]byte{[]byte(secret)}, webhook.DefaultTolerance, at.Add(time.Hour))
	fmt.Println("an hour later:", err)
	// Output:
	// fresh: <nil>
	// an hour later: webhook: signature timestamp outside tolerance
}

func ExampleSign() {
	fmt.Println(webhook.Sign(time.Unix(1700000000, 0), []byte(`{"id":"evt_1","n":1}`),
		[]byte("whsec_0123456789abcdefghijklmnopqrstuv")))
	// Output: t=1700000000,v1=a0a3f4a4b13e502d8572fa6d887793ac51185569ecaba0f6546f6bd8edffaf5f
}

// Rotation: the new secret signs at once, the old one keeps signing for the grace
// period, so the receiver can switch whenever it likes within it.
func ExampleTransport_RotateSecret() {
	var tr *webhook.Transport // from webhook.New
	ctx := context.Background()
	ep, err := tr.RotateSecret(ctx, "ep_01J...", webhook.RotateOptions{Grace: 48 * time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("new secret:", ep.Secrets[0].Value, "old one until", ep.Secrets[1].ExpiresAt)
}

// After an outage: look at what died, then resend it in bulk.
func ExampleTransport_ResendDead() {
	var tr *webhook.Transport // from webhook.New
	ctx := context.Background()
	since := time.Now().Add(-6 * time.Hour)
	dead, err := tr.Deliveries(ctx, webhook.DeliveryFilter{EndpointID: "ep_01J...", State: webhook.DeliveryDead, Since: since})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range dead {
		fmt.Println(d.ID, d.EventType, d.Reason, d.LastStatus, d.LastError)
	}
	n, err := tr.ResendDead(ctx, webhook.ResendFilter{EndpointID: "ep_01J...", Since: since})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("resent", n)
}

func ExampleTransport_Breaker() {
	var tr *webhook.Transport // from webhook.New
	s, err := tr.Breaker(context.Background(), "ep_01J...")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.State, s.Failures, s.OpenedAt)
}

// The Standard Webhooks signature (sent with Config.StandardWebhooks): receivers can
// check it with that ecosystem's libraries. This is the specification's own example.
func ExampleSignStandard() {
	key := webhook.StandardKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	fmt.Println(webhook.SignStandard("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`), key))
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
}
