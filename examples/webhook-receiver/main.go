// Command webhook-receiver is a webhook endpoint for trying the hub: it verifies each
// delivery's signature (webhook.Verify: HMAC-SHA256 over "<t>.<body>", 5 min tolerance,
// constant-time) and prints the CloudEvent. Register it first, then start it with the
// secret the hub returned:
//
//	curl -s -X POST http://127.0.0.1:8081/endpoints -H 'Content-Type: application/json' \
//	  -d '{"url":"http://127.0.0.1:9000/hook","types":["identity.#"]}'
//	go run ./examples/webhook-receiver -secret whsec_...
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/transports/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address")
	secret := flag.String("secret", os.Getenv("WEBHOOK_SECRET"), "the endpoint's signing secret (default $WEBHOOK_SECRET)")
	flag.Parse()
	if *secret == "" {
		log.Fatal("give -secret (the \"secret\" the hub returned when the endpoint was created)")
	}
	http.HandleFunc("POST /hook", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sig := r.Header.Get(webhook.SignatureHeader)
		if err := webhook.Verify(sig, body, [][]byte{[]byte(*secret)}, webhook.DefaultTolerance, time.Now()); err != nil {
			fmt.Printf("REJECTED delivery %s: %v\n", r.Header.Get(webhook.DeliveryHeader), err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		evs, err := cloudevent.FromHTTP(r.Header, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, ev := range evs {
			fmt.Printf("verified delivery %s: %s %s tenant=%s data=%s\n", r.Header.Get(webhook.DeliveryHeader), ev.Type, ev.ID, ev.TenantID(), ev.Data)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	fmt.Printf("listening on http://%s/hook\n", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
