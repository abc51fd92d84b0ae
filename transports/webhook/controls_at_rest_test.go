package webhook

import (
	"strings"
	"testing"

	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/secrets"
)

// storedControls reads an endpoint's controls column as the database holds it.
func (tb *testBundle) storedControls(t *testing.T, id string) string {
	t.Helper()
	var col string
	if err := tb.l.DB().QueryRowContext(tb.ctx, `SELECT controls FROM webhook_endpoints WHERE id = $1`, id).Scan(&col); err != nil {
		t.Fatal(err)
	}
	return col
}

// TestSEC_HeaderValuesAtRest: static header values (often credentials) are encrypted
// like the signing secrets: a row written before the key is upgraded by
// ReencryptSecrets, new rows at once, a rotation moves the header values and the mTLS
// key to the new key, views show the names only, and the receiver still gets the values
// as given.
func TestSEC_HeaderValuesAtRest(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setupWith(t, b, testConfig(), ledger.Config{}, false)
		headers := map[string]string{"Authorization": "Bearer s3cret-token", "X-Api-Key": "k3y-value"}
		old, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/old"), Patterns: []string{"#"},
			Controls: Controls{Headers: headers}})
		if err != nil {
			t.Fatal(err)
		}
		if col := tb.storedControls(t, old.ID); !strings.Contains(col, "s3cret-token") {
			t.Fatalf("without a key the values are stored as given; got %s", col)
		}

		k1, k2 := secrets.GenerateKey(), secrets.GenerateKey()
		r1, _ := secrets.NewKeyring(k1)
		tb.tr.st.ring = r1
		if st, _ := tb.tr.SecretsStatus(tb.ctx); st.Pending != 1 || st.Plaintext != 1 {
			t.Fatalf("SecretsStatus with plaintext header values = %+v, want the row pending", st)
		}
		if _, err := tb.tr.ReencryptSecrets(tb.ctx, secrets.ReencryptOptions{}); err != nil {
			t.Fatal(err)
		}
		fresh, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/new"), Patterns: []string{"#"},
			Controls: Controls{Headers: headers}})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{old.ID, fresh.ID} {
			col := tb.storedControls(t, id)
			if strings.Contains(col, "s3cret-token") || strings.Contains(col, "k3y-value") {
				t.Errorf("endpoint %s stores a header value in plaintext: %s", id, col)
			}
			if !strings.Contains(col, secrets.Marker+r1.PrimaryID()+":") || !strings.Contains(col, `"Authorization"`) {
				t.Errorf("endpoint %s: header values not under key %s (names kept): %s", id, r1.PrimaryID(), col)
			}
			if e, err := tb.tr.Endpoint(tb.ctx, id); err != nil || e.Controls.Headers["Authorization"] != "Bearer s3cret-token" {
				t.Errorf("endpoint %s reads back %v, %v", id, e.Controls.Headers, err)
			}
		}
		if st, _ := tb.tr.SecretsStatus(tb.ctx); st.Pending != 0 || st.Plaintext != 0 {
			t.Errorf("SecretsStatus after the upgrade = %+v", st)
		}

		// A ciphertext moved to another endpoint does not decrypt there.
		if _, err := tb.l.DB().ExecContext(tb.ctx, `UPDATE webhook_endpoints SET controls = $1 WHERE id = $2`,
			tb.storedControls(t, old.ID), fresh.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := tb.tr.Endpoint(tb.ctx, fresh.ID); err == nil {
			t.Error("a header value moved to another endpoint decrypted")
		}
		if err := tb.tr.DeleteEndpoint(tb.ctx, fresh.ID); err != nil {
			t.Fatal(err)
		}

		// Rotation: the new key first; re-encryption moves the header values too.
		r21, _ := secrets.NewKeyring(k2, k1)
		tb.tr.st.ring = r21
		if _, err := tb.tr.ReencryptSecrets(tb.ctx, secrets.ReencryptOptions{BatchSize: 1}); err != nil {
			t.Fatal(err)
		}
		if col := tb.storedControls(t, old.ID); !strings.Contains(col, secrets.Marker+r21.PrimaryID()+":") ||
			strings.Contains(col, secrets.Marker+r1.PrimaryID()+":") {
			t.Fatalf("header values not moved to the new key %s: %s", r21.PrimaryID(), col)
		}
		r2, _ := secrets.NewKeyring(k2)
		tb.tr.st.ring = r2

		// The receiver gets the values as given.
		if err := tb.l.Start(tb.ctx); err != nil {
			t.Fatal(err)
		}
		tb.send(t, newEvent(t, "user.created"))
		tb.waitStates(t, DeliveryFilter{EndpointID: old.ID}, 1, DeliveryDelivered)
		h := tb.recv.requests()[0].header
		if h.Get("Authorization") != "Bearer s3cret-token" || h.Get("X-Api-Key") != "k3y-value" {
			t.Fatalf("the receiver got %v", h)
		}
	})
}
