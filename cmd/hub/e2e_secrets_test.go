package main

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/secrets"
)

// endpointSecrets reads the secrets column of every webhook endpoint as the SQLite file
// holds it (the hub is stopped).
func endpointSecrets(t *testing.T, dbPath string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, secrets FROM webhook_endpoints`)
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
	return out
}

// TestSEC_SecretsAtRest: endpoints registered before a key existed are stored in
// plaintext; once HUB_SECRET_KEY is set, `hub secrets reencrypt` leaves no plaintext in
// the table (read directly) and deliveries still verify with the original secret; a key
// rotation (new key first, reencrypt, old key dropped) round-trips. The embedded default
// makes its key file (0600) beside its database on the first run and encrypts at once.
func TestSEC_SecretsAtRest(t *testing.T) {
	t.Parallel()
	t.Run("UpgradeAndRotation", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		ingress, admin := freeAddr(t), freeAddr(t)
		cfg := writeConfig(t, dir, `
store: {sqlite: data/hub.db}
sources:
  in: {type: http, listen: `+ingress+`}
transports:
  webhooks: {type: webhook, allow: [127.0.0.1]}
routes:
  - {pattern: "*", to: webhooks}
admin: {listen: `+admin+`}
`)
		db := filepath.Join(dir, "data", "hub.db")
		rcA, rcB := &receiver{ids: map[string]int{}}, &receiver{ids: map[string]int{}}
		srvA, srvB := httptest.NewServer(rcA), httptest.NewServer(rcB)
		t.Cleanup(srvA.Close)
		t.Cleanup(srvB.Close)
		env := []string{"HUB_ADMIN_URL=http://" + admin}
		k1, k2 := secrets.EncodeKey(secrets.GenerateKey()), secrets.EncodeKey(secrets.GenerateKey())
		id1, id2 := keyID(t, k1), keyID(t, k2)

		// Without a key: plaintext, as before encryption existed.
		p := startHubEnv(t, cfg, admin)
		secretA := registerEndpoint(t, admin, "", srvA.URL+"/a")
		secretB := registerEndpoint(t, admin, "", srvB.URL+"/b")
		for rc, s := range map[*receiver]string{rcA: secretA, rcB: secretB} {
			rc.mu.Lock()
			rc.secret = []byte(s)
			rc.mu.Unlock()
		}
		if code := p.stop(); code != 0 {
			t.Fatalf("stop: %d\n%s", code, p.log())
		}
		stored := endpointSecrets(t, db)
		if len(stored) != 2 || !strings.Contains(strings.Join(values(stored), " "), secretA) {
			t.Fatalf("before a key: %v", stored)
		}

		// HUB_SECRET_KEY set: reencrypt upgrades both rows; deliveries still verify.
		p = startHubEnv(t, cfg, admin, "HUB_SECRET_KEY="+k1)
		if !strings.Contains(p.log(), "wait for re-encryption") {
			t.Errorf("the start does not say rows wait for re-encryption\n%s", p.log())
		}
		out, code := cliRun(t, dir, env, "secrets", "reencrypt")
		if code != 0 || !strings.Contains(out, `"updated": 2`) {
			t.Fatalf("secrets reencrypt: exit %d\n%s", code, out)
		}
		out, code = cliRun(t, dir, env, "secrets", "status")
		if code != 0 || !strings.Contains(out, `"pending": 0`) || !strings.Contains(out, id1) {
			t.Errorf("secrets status: exit %d\n%s", code, out)
		}
		publishAndVerify(t, ingress, "evt_sec_rest_1", rcA, rcB)
		p.stop()
		for id, col := range endpointSecrets(t, db) {
			if strings.Contains(col, secretA) || strings.Contains(col, secretB) || strings.Contains(col, "whsec_") {
				t.Errorf("row %s still holds a plaintext secret: %s", id, col)
			}
			if !strings.Contains(col, secrets.Marker+id1+":") {
				t.Errorf("row %s is not under key %s: %s", id, id1, col)
			}
		}

		// Rotation: the new key first, the old one still decrypts; reencrypt moves every
		// row; then the hub runs on the new key alone.
		p = startHubEnv(t, cfg, admin, "HUB_SECRET_KEY="+k2+","+k1)
		if out, code := cliRun(t, dir, env, "secrets", "reencrypt"); code != 0 || !strings.Contains(out, `"updated": 2`) {
			t.Fatalf("reencrypt after the rotation: exit %d\n%s", code, out)
		}
		p.stop()
		for id, col := range endpointSecrets(t, db) {
			if !strings.Contains(col, secrets.Marker+id2+":") || strings.Contains(col, id1) {
				t.Errorf("row %s after the rotation: %s", id, col)
			}
		}
		p = startHubEnv(t, cfg, admin, "HUB_SECRET_KEY="+k2)
		publishAndVerify(t, ingress, "evt_sec_rest_2", rcA, rcB)
		if code := p.stop(); code != 0 {
			t.Errorf("stop: %d", code)
		}
	})

	t.Run("EmbeddedDefaultKeyFile", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		ingress, admin := freeAddr(t), freeAddr(t)
		run := func() *hubProc { return startEmbedded(t, dir, ingress, admin) }
		p := run()
		secret := registerEndpoint(t, admin, "", "http://127.0.0.1:9/hook")
		p.stop()
		st, err := os.Stat(filepath.Join(dir, "data", "hub.db.key"))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("key file: %v, mode %v", err, st)
		}
		for id, col := range endpointSecrets(t, filepath.Join(dir, "data", "hub.db")) {
			if strings.Contains(col, secret) || !strings.Contains(col, secrets.Marker) {
				t.Errorf("row %s: %s", id, col)
			}
		}
		// The second run reuses the key: the endpoint still reads.
		run()
		var eps []struct{ ID string }
		r := send(t, http.MethodGet, "http://"+admin+"/endpoints", nil, "")
		if err := json.Unmarshal([]byte(r.body), &eps); err != nil || len(eps) != 1 {
			t.Fatalf("endpoints after a restart: %d %s", r.status, r.body)
		}
		if r := send(t, http.MethodGet, "http://"+admin+"/endpoints/"+eps[0].ID, nil, ""); r.status != http.StatusOK {
			t.Errorf("endpoint after a restart: %d %s", r.status, r.body)
		}
	})
}

func keyID(t *testing.T, encoded string) string {
	t.Helper()
	r, err := secrets.ParseKeys(encoded)
	if err != nil {
		t.Fatal(err)
	}
	return r.PrimaryID()
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// publishAndVerify posts an event and waits until both receivers verified its
// signature with the secret they were given at registration.
func publishAndVerify(t *testing.T, ingress, id string, rcs ...*receiver) {
	t.Helper()
	status, body, err := postJSON("http://"+ingress+"/events", "application/cloudevents+json", "", erasedEvent(id))
	if err != nil || status != http.StatusAccepted {
		t.Fatalf("POST: %d %v %s", status, err, body)
	}
	testenv.WaitFor(t, 30*time.Second, "signed deliveries of "+id, func() bool {
		for _, rc := range rcs {
			if !rc.has(id) {
				return false
			}
		}
		return true
	})
	for _, rc := range rcs {
		if rejected := rc.rejections(); rejected > 0 {
			t.Errorf("a receiver rejected %d signatures", rejected)
		}
	}
}
