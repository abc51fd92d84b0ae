package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
)

// TestSEC_AdminTenantScope: a token scoped to a tenant (and a link token issued for it)
// sees and manages that tenant's endpoints, deliveries, keys and audit records only,
// filtered server-side; another tenant's object is 404; it cannot create or move
// objects into another tenant; operator-only paths are 403; a read-only token cannot
// write.
func TestSEC_AdminTenantScope(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ingress, admin := freeAddr(t), freeAddr(t)
	const (
		ops      = "eha_e2e_tenant_operator_token_0123456789abcd"
		acme     = "eha_e2e_tenant_acme_token_0123456789abcdefgh"
		globex   = "eha_e2e_tenant_globex_token_0123456789abcdef"
		acmeRead = "eha_e2e_tenant_acme_read_token_0123456789abc"
	)
	tokens := "# operators\n" + ops + "\n" + acme + " tenant=acme\n" + globex + " tenant=globex\n" + acmeRead + " tenant=acme scopes=read\n"
	if err := os.WriteFile(filepath.Join(dir, "admin-tokens"), []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, `
store: {sqlite: data/hub.db}
secrets: {key_file: data/hub.key, create_key_file: true}
sources:
  in: {type: http, listen: `+ingress+`}
transports:
  webhooks: {type: webhook, allow: [127.0.0.1]}
routes:
  - {pattern: "*", to: webhooks}
admin:
  listen: `+admin+`
  token_file: admin-tokens
`)
	startHubEnv(t, cfg, admin)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(rc.Close)
	base := "http://" + admin
	call := func(tok, method, path, body string) reply {
		h := map[string]string{"Authorization": "Bearer " + tok}
		if body != "" {
			h["Content-Type"] = "application/json"
		}
		return send(t, method, base+path, h, body)
	}
	id := func(r reply) string {
		var v struct{ ID string }
		if err := json.Unmarshal([]byte(r.body), &v); err != nil || v.ID == "" {
			t.Fatalf("no id in %d %s", r.status, r.body)
		}
		return v.ID
	}
	want := func(what string, r reply, status int) {
		t.Helper()
		if r.status != status {
			t.Errorf("%s: %d, want %d\n%s", what, r.status, status, r.body)
		}
	}

	// Endpoints.
	r := call(ops, "POST", "/endpoints", `{"url":"`+rc.URL+`/g","types":["identity.#"],"tenant":"globex"}`)
	want("operator creates globex's endpoint", r, 201)
	epG := id(r)
	r = call(acme, "POST", "/endpoints", `{"url":"`+rc.URL+`/a","types":["identity.#"]}`)
	want("acme creates its endpoint", r, 201)
	epA := id(r)
	if !strings.Contains(r.body, `"tenant": "acme"`) {
		t.Errorf("acme's endpoint is not pinned to acme: %s", r.body)
	}
	r = call(acme, "POST", "/endpoints", `{"url":"`+rc.URL+`/x","types":["#"],"tenant":"globex"}`)
	if st, field := r.problem(t); st != 403 || field != "tenant" {
		t.Errorf("acme creates an endpoint for globex: %d %q %s", st, field, r.body)
	}
	r = call(acme, "GET", "/endpoints", "")
	if r.status != 200 || !strings.Contains(r.body, epA) || strings.Contains(r.body, epG) {
		t.Errorf("acme's listing: %d %s", r.status, r.body)
	}
	if r := call(ops, "GET", "/endpoints", ""); !strings.Contains(r.body, epA) || !strings.Contains(r.body, epG) {
		t.Errorf("the operator's listing: %s", r.body)
	}
	want("acme reads globex's endpoint", call(acme, "GET", "/endpoints/"+epG, ""), 404)
	want("acme changes globex's endpoint", call(acme, "PATCH", "/endpoints/"+epG, `{"enabled":false}`), 404)
	want("acme rotates globex's secret", call(acme, "POST", "/endpoints/"+epG+"/rotate", `{}`), 404)
	want("acme deletes globex's endpoint", call(acme, "DELETE", "/endpoints/"+epG, ""), 404)
	r = call(acme, "PATCH", "/endpoints/"+epA, `{"tenant":"globex"}`)
	if st, field := r.problem(t); st != 403 || field != "tenant" {
		t.Errorf("acme moves its endpoint to globex: %d %q", st, field)
	}
	want("acme changes its own endpoint", call(acme, "PATCH", "/endpoints/"+epA, `{"description":"mine"}`), 200)
	want("a read-only token writes", call(acmeRead, "POST", "/endpoints", `{"url":"`+rc.URL+`/r","types":["#"]}`), 403)
	want("a read-only token reads", call(acmeRead, "GET", "/endpoints/"+epA, ""), 200)

	// Operator-only paths.
	for _, p := range []string{"/routes", "/transports", "/outbox", "/metrics", "/secrets"} {
		want("acme GET "+p, call(acme, "GET", p, ""), 403)
	}
	want("acme issues a link", call(acme, "POST", "/links", `{"tenant":"acme"}`), 403)
	want("acme re-encrypts", call(acme, "POST", "/secrets/reencrypt", `{}`), 403)

	// Deliveries: one event per tenant; each tenant sees its own.
	for i, tenant := range []string{"acme", "globex"} {
		ev := event("evt_scope_"+strconv.Itoa(i), tenant)
		if st, body, err := postJSON("http://"+ingress+"/events", "application/cloudevents+json", "", []byte(ev)); err != nil || st != 202 {
			t.Fatalf("publish: %d %v %s", st, err, body)
		}
	}
	var all []struct {
		ID         int64  `json:"id"`
		EndpointID string `json:"endpoint_id"`
		State      string `json:"state"`
	}
	testenv.WaitFor(t, 30*time.Second, "both deliveries delivered", func() bool {
		_ = json.Unmarshal([]byte(call(ops, "GET", "/deliveries?status=delivered", "").body), &all)
		return len(all) == 2
	})
	var globexDelivery int64
	for _, d := range all {
		if d.EndpointID == epG {
			globexDelivery = d.ID
		}
	}
	r = call(acme, "GET", "/deliveries", "")
	if r.status != 200 || !strings.Contains(r.body, epA) || strings.Contains(r.body, epG) {
		t.Errorf("acme's deliveries: %d %s", r.status, r.body)
	}
	want("acme reads globex's delivery", call(acme, "GET", "/deliveries/"+strconv.FormatInt(globexDelivery, 10), ""), 404)
	want("acme resends globex's delivery", call(acme, "POST", "/deliveries/resend", `{"ids":["`+strconv.FormatInt(globexDelivery, 10)+`"]}`), 404)

	// API keys.
	r = call(acme, "POST", "/keys", `{"name":"svc"}`)
	want("acme creates a key", r, 201)
	if !strings.Contains(r.body, `"tenant_id": "acme"`) || !strings.Contains(r.body, `"key": "ehk_`) {
		t.Errorf("acme's key: %s", r.body)
	}
	r = call(acme, "POST", "/keys", `{"tenant":"globex"}`)
	if st, field := r.problem(t); st != 403 || field != "tenant" {
		t.Errorf("acme makes a key for globex: %d %q", st, field)
	}
	r = call(ops, "POST", "/keys", `{"tenant":"globex"}`)
	want("the operator makes a key for globex", r, 201)
	gKey := id(r)
	r = call(acme, "GET", "/keys", "")
	if r.status != 200 || strings.Contains(r.body, gKey) || !strings.Contains(r.body, `"tenant_id": "acme"`) {
		t.Errorf("acme's keys: %d %s", r.status, r.body)
	}
	want("acme revokes globex's key", call(acme, "POST", "/keys/"+gKey+"/revoke", ""), 404)
	want("acme reads globex's key", call(acme, "GET", "/keys/"+gKey, ""), 404)
	if r := call(acme, "GET", "/keys?tenant=globex", ""); strings.Contains(r.body, gKey) {
		t.Errorf("acme asks for globex's keys and gets them: %s", r.body)
	}

	// The audit trail: acme reads its own tenant's records, denials included.
	var recs struct {
		Records []struct {
			Tenant  string `json:"tenant_id"`
			Action  string `json:"action"`
			Outcome string `json:"outcome"`
			ActorID string `json:"actor_id"`
		} `json:"records"`
	}
	r = call(acme, "GET", "/audit?tenant=globex&limit=1000", "")
	if err := json.Unmarshal([]byte(r.body), &recs); err != nil || len(recs.Records) == 0 {
		t.Fatalf("acme's audit: %d %s", r.status, r.body)
	}
	denied := 0
	for _, rec := range recs.Records {
		if rec.Tenant != "acme" {
			t.Errorf("acme sees an audit record of tenant %q: %+v", rec.Tenant, rec)
		}
		if rec.Outcome == "denied" {
			denied++
		}
	}
	if denied == 0 {
		t.Errorf("acme's denied attempts are not in its audit trail: %+v", recs.Records)
	}
	r = call(ops, "GET", "/audit?action=endpoint.create", "")
	if err := json.Unmarshal([]byte(r.body), &recs); err != nil || len(recs.Records) < 3 {
		t.Errorf("the operator's audit of endpoint.create: %s", r.body)
	}

	// A link token for acme: acme's view through ?link=, read-only by default.
	r = call(ops, "POST", "/links", `{"tenant":"acme","ttl":"10m"}`)
	want("the operator issues a link", r, 201)
	var link struct{ Token, ID string }
	_ = json.Unmarshal([]byte(r.body), &link)
	if !strings.HasPrefix(link.Token, "ehl_") {
		t.Fatalf("link: %s", r.body)
	}
	r = send(t, "GET", base+"/endpoints?link="+link.Token, nil, "")
	if r.status != 200 || !strings.Contains(r.body, epA) || strings.Contains(r.body, epG) {
		t.Errorf("the link's listing: %d %s", r.status, r.body)
	}
	want("the link reads globex's endpoint", send(t, "GET", base+"/endpoints/"+epG+"?link="+link.Token, nil, ""), 404)
	want("the link writes", call(link.Token, "POST", "/endpoints", `{"url":"`+rc.URL+`/l","types":["#"]}`), 403)
	want("a tampered link", send(t, "GET", base+"/endpoints?link="+link.Token[:len(link.Token)-2]+"AA", nil, ""), 401)

	// Revocation by id, before the expiry: operators only, at once, for good.
	want("acme revokes its link", call(acme, "DELETE", "/links/"+link.ID, ""), 403)
	want("the operator revokes the link", call(ops, "DELETE", "/links/"+link.ID, ""), 204)
	want("a revoked link reads", send(t, "GET", base+"/endpoints?link="+link.Token, nil, ""), 401)
	want("revoking it again", call(ops, "DELETE", "/links/"+link.ID, ""), 204)
	r = call(ops, "POST", "/links", `{"tenant":"acme","ttl":"10m"}`)
	var other struct{ Token string }
	_ = json.Unmarshal([]byte(r.body), &other)
	want("another link of acme's still reads", send(t, "GET", base+"/endpoints?link="+other.Token, nil, ""), 200)
}
