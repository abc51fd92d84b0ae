package webhook_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/secrets"
	"github.com/koder/eventhub/transports/webhook"
)

// Signing secrets encrypted at rest: an endpoint registered before a key was configured
// is stored in plaintext; once the transport has a key ring, ReencryptSecrets encrypts it
// (and, after a key rotation, moves every row to the new key), and SecretsStatus says
// what still waits.
func ExampleTransport_ReencryptSecrets() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "webhook-secrets")
	defer os.RemoveAll(dir)
	open := func(ring *secrets.Keyring) (*ledger.Ledger, *webhook.Transport) {
		l, err := ledger.Open(ctx, ledger.Config{DSN: "sqlite://" + filepath.Join(dir, "hub.db"), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			log.Fatal(err)
		}
		tr, err := webhook.New(ctx, webhook.Config{Keyring: ring, Allow: []string{"127.0.0.1"}, Logger: slog.New(slog.DiscardHandler)}, l)
		if err != nil {
			log.Fatal(err)
		}
		return l, tr
	}

	l, tr := open(nil) // no key yet
	if _, err := tr.CreateEndpoint(ctx, webhook.EndpointSpec{URL: "http://127.0.0.1:9000/hook", Patterns: []string{"#"}}); err != nil {
		log.Fatal(err)
	}
	tr.Close()
	l.Close()

	ring, _ := secrets.NewKeyring(secrets.GenerateKey()) // from HUB_SECRET_KEY or a key file
	l, tr = open(ring)
	defer l.Close()
	defer tr.Close()
	st, _ := tr.SecretsStatus(ctx)
	fmt.Printf("before: %d endpoint, %d in plaintext, %d to re-encrypt\n", st.Endpoints, st.Plaintext, st.Pending)
	res, err := tr.ReencryptSecrets(ctx, secrets.ReencryptOptions{})
	if err != nil {
		log.Fatal(err) // resume with ReencryptOptions{After: res.Last}
	}
	st, _ = tr.SecretsStatus(ctx)
	fmt.Printf("re-encrypted %d; after: %d in plaintext, %d to re-encrypt\n", res.Updated, st.Plaintext, st.Pending)
	// Output:
	// before: 1 endpoint, 1 in plaintext, 1 to re-encrypt
	// re-encrypted 1; after: 0 in plaintext, 0 to re-encrypt
}
