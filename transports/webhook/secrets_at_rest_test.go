package webhook

import (
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/secrets"
)

// storedSecrets reads the secrets column of every endpoint row as the database holds it.
func (tb *testBundle) storedSecrets(t *testing.T) map[string]string {
	t.Helper()
	rows, err := tb.l.DB().QueryContext(tb.ctx, `SELECT id, secrets FROM webhook_endpoints ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, col string
		if err := rows.Scan(&id, &col); err != nil {
			t.Fatal(err)
		}
		out[id] = col
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSEC_WebhookSecretsAtRest: with a key ring, no signing secret is stored in
// plaintext: rows written before the key are upgraded by ReencryptSecrets, new rows are
// encrypted at once, a ciphertext moved to another row does not decrypt, a rotation
// moves every row to the new key, deliveries are still signed with the original secret,
// and a user-supplied secret that looks encrypted is refused.
func TestSEC_WebhookSecretsAtRest(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setupWith(t, b, testConfig(), ledger.Config{}, false)
		s1, s2 := NewSecret(), NewSecret()
		ep1, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/one"), Patterns: []string{"#"}, Secret: s1})
		if err != nil {
			t.Fatal(err)
		}
		ep2, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/two"), Patterns: []string{"#"}, Secret: s2})
		if err != nil {
			t.Fatal(err)
		}
		if got := tb.storedSecrets(t)[ep1.ID]; !strings.Contains(got, s1) {
			t.Fatalf("without a key the secret is stored as given; got %s", got)
		}

		// A key is configured (the ledger is not started yet: no worker reads the store).
		k1, k2 := secrets.GenerateKey(), secrets.GenerateKey()
		r1, _ := secrets.NewKeyring(k1)
		tb.tr.st.ring = r1
		if e, err := tb.tr.Endpoint(tb.ctx, ep1.ID); err != nil || e.Secrets[0].Value != s1 {
			t.Fatalf("a plaintext row still reads under a key: %v", err)
		}
		st, err := tb.tr.SecretsStatus(tb.ctx)
		if err != nil || st != (SecretsStatus{Endpoints: 2, Pending: 2, Plaintext: 2}) {
			t.Fatalf("SecretsStatus before the upgrade = %+v, %v", st, err)
		}
		res, err := tb.tr.ReencryptSecrets(tb.ctx, secrets.ReencryptOptions{})
		if err != nil || res.Updated != 2 || res.Last != controlsWalk+ep2.ID {
			t.Fatalf("ReencryptSecrets = %+v, %v", res, err)
		}
		ep3, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/three"), Patterns: []string{"#"}})
		if err != nil {
			t.Fatal(err)
		}
		s3 := ep3.Secrets[0].Value
		if _, err := tb.tr.RotateSecret(tb.ctx, ep2.ID, RotateOptions{Grace: time.Hour}); err != nil {
			t.Fatal(err)
		}
		stored := tb.storedSecrets(t)
		for id, col := range stored {
			for _, plain := range []string{s1, s2, s3} {
				if strings.Contains(col, plain) {
					t.Errorf("row %s holds a plaintext secret: %s", id, col)
				}
			}
			if !strings.Contains(col, secrets.Marker+r1.PrimaryID()+":") {
				t.Errorf("row %s is not under key %s: %s", id, r1.PrimaryID(), col)
			}
		}
		if st, _ := tb.tr.SecretsStatus(tb.ctx); st != (SecretsStatus{Endpoints: 3}) {
			t.Errorf("SecretsStatus after the upgrade = %+v", st)
		}

		// A ciphertext copied into another row does not decrypt there.
		if _, err := tb.l.DB().ExecContext(tb.ctx, `UPDATE webhook_endpoints SET secrets = $1 WHERE id = $2`, stored[ep1.ID], ep3.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := tb.tr.Endpoint(tb.ctx, ep3.ID); hub.Code(err) != hub.PermissionDenied {
			t.Errorf("a moved ciphertext: %v, want PermissionDenied", err)
		}
		if _, err := tb.l.DB().ExecContext(tb.ctx, `UPDATE webhook_endpoints SET secrets = $1 WHERE id = $2`, stored[ep3.ID], ep3.ID); err != nil {
			t.Fatal(err)
		}

		// Rotation: a new key first, the old one still decrypts; re-encryption moves
		// every row to the new key; then the old key can go.
		r21, _ := secrets.NewKeyring(k2, k1)
		tb.tr.st.ring = r21
		if st, _ := tb.tr.SecretsStatus(tb.ctx); st.Pending != 3 {
			t.Errorf("SecretsStatus after adding a key = %+v, want 3 pending", st)
		}
		if res, err := tb.tr.ReencryptSecrets(tb.ctx, secrets.ReencryptOptions{BatchSize: 2}); err != nil || res.Updated != 3 || res.Scanned != 6 { // each row twice: its secrets, then its controls
			t.Fatalf("ReencryptSecrets after the rotation = %+v, %v", res, err)
		}
		if res, err := tb.tr.ReencryptSecrets(tb.ctx, secrets.ReencryptOptions{}); err != nil || res.Updated != 0 {
			t.Errorf("a second run rewrote rows: %+v, %v", res, err)
		}
		r2, _ := secrets.NewKeyring(k2)
		tb.tr.st.ring = r2
		for _, id := range []string{ep1.ID, ep2.ID, ep3.ID} {
			if _, err := tb.tr.Endpoint(tb.ctx, id); err != nil {
				t.Errorf("endpoint %s under the new key alone: %v", id, err)
			}
		}
		r1only, _ := secrets.NewKeyring(k1)
		tb.tr.st.ring = r1only
		if _, err := tb.tr.Endpoint(tb.ctx, ep1.ID); hub.Code(err) != hub.FailedPrecondition {
			t.Errorf("reading with a ring that lacks the key: %v, want FailedPrecondition", err)
		}
		tb.tr.st.ring = nil
		if _, err := tb.tr.Endpoint(tb.ctx, ep1.ID); hub.Code(err) != hub.FailedPrecondition {
			t.Errorf("reading an encrypted row without a key: %v, want FailedPrecondition", err)
		}
		if _, err := tb.tr.ReencryptSecrets(tb.ctx, secrets.ReencryptOptions{}); hub.Code(err) != hub.FailedPrecondition {
			t.Errorf("ReencryptSecrets without a key: %v", err)
		}
		tb.tr.st.ring = r2

		// Values that look encrypted are never accepted from a caller.
		sealed, err := parseSecrets(ep1.ID, stored[ep1.ID])
		if err != nil || !secrets.IsEncrypted(sealed[0].Value) {
			t.Fatalf("stored %s: %v", stored[ep1.ID], err)
		}
		if _, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/x"), Patterns: []string{"#"}, Secret: sealed[0].Value}); hub.Code(err) != hub.InvalidArgument {
			t.Errorf("an enc: secret on create: %v", err)
		}
		if _, err := tb.tr.RotateSecret(tb.ctx, ep1.ID, RotateOptions{Secret: "enc:v1:00000000:" + strings.Repeat("A", 40)}); hub.Code(err) != hub.InvalidArgument {
			t.Errorf("an enc: secret on rotate: %v", err)
		}

		// Deliveries are signed with the secret the endpoint was given.
		if err := tb.l.Start(tb.ctx); err != nil {
			t.Fatal(err)
		}
		ev := newEvent(t, "user.created")
		tb.send(t, ev)
		testenv.WaitFor(t, 30*time.Second, "the delivery to /one", func() bool { return tb.recv.count("/one") == 1 })
		for _, r := range tb.recv.requests() {
			if r.path != "/one" {
				continue
			}
			if err := Verify(r.header.Get(SignatureHeader), r.body, [][]byte{[]byte(s1)}, time.Minute, time.Now()); err != nil {
				t.Errorf("signature with the original secret: %v", err)
			}
		}
	})
}
