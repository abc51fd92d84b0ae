package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/koder/eventhub/cloudevent"
)

// TestSEC_AdminCrossSite: the admin API refuses what a web page in the operator's
// browser could make it do, on the embedded default (no token) and with a token: the
// issue's text/plain cross-site POST, its variants without a content type, form-encoded,
// with Origin null or Sec-Fetch-Site cross-site, and a DNS-rebinding Host, each with a
// problem document; a same-origin JSON request works (with the token when there is one).
func TestSEC_AdminCrossSite(t *testing.T) {
	t.Parallel()
	const token = "eha_e2e_cross_site_operator_token_0123456789"
	t.Run("EmbeddedDefault", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		ingress, admin := freeAddr(t), freeAddr(t)
		startEmbedded(t, dir, ingress, admin)
		crossSiteTable(t, admin, "")
	})
	t.Run("Token", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		admin := freeAddr(t)
		cfg := writeConfig(t, dir, `
store: {sqlite: data/hub.db}
transports:
  webhooks: {type: webhook, allow: [127.0.0.1]}
routes:
  - {pattern: "*", to: webhooks}
admin:
  listen: `+admin+`
  token: ${OPS_TOKEN}
`)
		startHubEnv(t, cfg, admin, "OPS_TOKEN="+token)
		crossSiteTable(t, admin, token)
		base := "http://" + admin
		r := send(t, http.MethodGet, base+"/endpoints", nil, "")
		if st, _ := r.problem(t); r.status != http.StatusUnauthorized || st != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("no token: %d %v %s", r.status, r.header, r.body)
		}
		if r := send(t, http.MethodGet, base+"/endpoints", map[string]string{"Authorization": "Bearer eha_wrong_token_0123456789abcdef"}, ""); r.status != http.StatusUnauthorized {
			t.Errorf("wrong token: %d %s", r.status, r.body)
		}
		if r := send(t, http.MethodGet, base+"/healthz", nil, ""); r.status != http.StatusOK {
			t.Errorf("/healthz without a token: %d", r.status)
		}
	})
}

func crossSiteTable(t *testing.T, admin, token string) {
	t.Helper()
	base := "http://" + admin
	body := `{"url":"http://127.0.0.1:9/x","types":["#"]}`
	auth := func(h map[string]string) map[string]string {
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		return h
	}
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		body   string
		status int
		field  string
	}{
		{"TheIssuesCurl", "POST", "/endpoints", map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"}, body, 403, "Origin"},
		{"TextPlainNoOrigin", "POST", "/endpoints", map[string]string{"Content-Type": "text/plain"}, body, 415, "Content-Type"},
		{"NoContentType", "POST", "/endpoints", map[string]string{}, body, 415, "Content-Type"},
		{"FormEncoded", "POST", "/endpoints", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "url=http://127.0.0.1:9/x", 415, "Content-Type"},
		{"Multipart", "POST", "/endpoints", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, "--x--", 415, "Content-Type"},
		{"OriginNull", "POST", "/endpoints", map[string]string{"Content-Type": "application/json", "Origin": "null"}, body, 403, "Origin"},
		{"ForeignOriginJSON", "POST", "/endpoints", map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, body, 403, "Origin"},
		{"OtherLocalPort", "POST", "/endpoints", map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1:1"}, body, 403, "Origin"},
		{"SecFetchCrossSite", "POST", "/endpoints", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, body, 403, "Sec-Fetch-Site"},
		{"SecFetchSameSite", "DELETE", "/endpoints/ep_x", map[string]string{"Sec-Fetch-Site": "same-site"}, "", 403, "Sec-Fetch-Site"},
		{"RebindingHostRead", "GET", "/endpoints", map[string]string{"Host": "evil.example:" + portOf(admin)}, "", 403, "Host"},
		{"RebindingHostWrite", "POST", "/endpoints", map[string]string{"Host": "rebind.evil.example", "Content-Type": "application/json"}, body, 403, "Host"},
	}
	for _, c := range cases {
		r := send(t, c.method, base+c.path, auth(c.hdr), c.body)
		st, field := r.problem(t)
		if r.status != c.status || st != c.status || field != c.field {
			t.Errorf("%s: %d (problem status %d, field %q), want %d naming %q\n%s", c.name, r.status, st, field, c.status, c.field, r.body)
		}
	}
	// What a same-origin page (or curl) sends works.
	r := send(t, http.MethodPost, base+"/endpoints", auth(map[string]string{"Content-Type": "application/json",
		"Origin": base, "Sec-Fetch-Site": "same-origin"}), body)
	if r.status != http.StatusCreated || !strings.Contains(r.body, `"secret"`) {
		t.Fatalf("same-origin JSON: %d %s", r.status, r.body)
	}
	if r := send(t, http.MethodGet, "http://localhost:"+portOf(admin)+"/endpoints", auth(map[string]string{}), ""); r.status != http.StatusOK {
		t.Errorf("Host localhost: %d %s", r.status, r.body)
	}
}

func portOf(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }

// TestSEC_IngressAuth: the ingress with API keys and JWTs: every missing or bad
// credential is 401, another tenant's event or a type outside the key's patterns is 403
// naming the field, a good key and a good JWT are 202, a key's rate limit is 429 with
// Retry-After, and an ingress on a non-loopback address without credentials does not
// start.
func TestSEC_IngressAuth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ingress, admin := freeAddr(t), freeAddr(t)
	p := newIDP(t)
	const ops = "eha_e2e_ingress_operator_token_0123456789ab"
	cfg := writeConfig(t, dir, `
store: {sqlite: data/hub.db}
auth:
  jwt:
    jwks_url: `+p.srv.URL+`
    issuer: `+testIssuer+`
    audience: `+testAudience+`
    types_claim: event_types
sources:
  in:
    type: http
    listen: `+ingress+`
    auth: [api_key, jwt]
    rate_limit: {per_key: 0.01, key_burst: 3}
transports:
  events: {type: kdbstream, stream: events}
routes:
  - {pattern: "#", to: events, default_subject: unspecified}
admin:
  listen: `+admin+`
  token: `+ops+`
`)
	startHubEnv(t, cfg, admin)
	env := []string{"HUB_ADMIN_URL=http://" + admin, "HUB_ADMIN_TOKEN=" + ops}
	newKey := func(args ...string) (id, key string) {
		out, code := cliRun(t, dir, env, append([]string{"keys", "create"}, args...)...)
		var k struct{ ID, Key string }
		if code != 0 || json.Unmarshal([]byte(out), &k) != nil || !strings.HasPrefix(k.Key, "ehk_") {
			t.Fatalf("keys create %v: exit %d\n%s", args, code, out)
		}
		return k.ID, k.Key
	}
	_, acme := newKey("--tenant", "acme", "--types", "identity.#")
	_, acmeRate := newKey("--tenant", "acme")
	revokedID, revoked := newKey("--tenant", "acme")
	if out, code := cliRun(t, dir, env, "keys", "revoke", revokedID); code != 0 || !strings.Contains(out, `"revoked_at"`) {
		t.Fatalf("keys revoke: exit %d\n%s", code, out)
	}
	other := rsaKeys[1] // not in the provider's key set
	url := "http://" + ingress + "/events"
	post := func(cred, body string) reply {
		h := map[string]string{"Content-Type": "application/cloudevents+json"}
		if cred != "" {
			h["Authorization"] = "Bearer " + cred
		}
		return send(t, http.MethodPost, url, h, body)
	}
	ev := func(tenant string) string { return event(cloudevent.NewID(), tenant) }
	cases := []struct {
		name   string
		cred   string
		body   string
		status int
		field  string
	}{
		{"NoCredential", "", ev("acme"), 401, ""},
		{"UnknownKey", forgedKey(), ev("acme"), 401, ""},
		{"MalformedKey", "ehk_not_a_key", ev("acme"), 401, ""},
		{"RevokedKey", revoked, ev("acme"), 401, ""},
		{"AdminTokenAtTheIngress", ops, ev("acme"), 401, ""},
		{"KeyOfAcmePostsGlobex", acme, ev("globex"), 403, "tenantid"},
		{"TypeOutsideTheKeysPatterns", acme, strings.Replace(ev("acme"), "identity.user.erased", "billing.invoice.paid", 1), 403, "type"},
		{"JWTBadSignature", p.token(t, other, nil), ev("acme"), 401, ""},
		{"JWTWrongAudience", p.token(t, nil, func(c jwt.MapClaims) { c["aud"] = "someone-else" }), ev("acme"), 401, ""},
		{"JWTExpired", p.token(t, nil, func(c jwt.MapClaims) { c["exp"] = c["iat"].(int64) - 600; c["iat"] = c["iat"].(int64) - 900 }), ev("acme"), 401, ""},
		{"JWTWithoutTenantClaim", p.token(t, nil, func(c jwt.MapClaims) { delete(c, "tenant_id") }), ev("acme"), 401, ""},
		{"JWTOfAcmePostsGlobex", p.token(t, nil, nil), ev("globex"), 403, "tenantid"},
		{"JWTTypeOutsideItsClaim", p.token(t, nil, func(c jwt.MapClaims) { c["event_types"] = []string{"billing.#"} }), ev("acme"), 403, "type"},
		{"GoodKey", acme, ev("acme"), 202, ""},
		{"GoodJWT", p.token(t, nil, nil), ev("acme"), 202, ""},
	}
	for _, c := range cases {
		r := post(c.cred, c.body)
		if r.status != c.status {
			t.Errorf("%s: %d, want %d\n%s", c.name, r.status, c.status, r.body)
			continue
		}
		if c.status == 202 {
			continue
		}
		st, field := r.problem(t)
		if st != c.status || field != c.field {
			t.Errorf("%s: problem status %d field %q, want %d %q\n%s", c.name, st, field, c.status, c.field, r.body)
		}
		if c.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), `Bearer realm="hub-ingress"`) {
			t.Errorf("%s: WWW-Authenticate %q", c.name, r.header.Get("WWW-Authenticate"))
		}
	}

	// A batch is charged per event: three pass the burst of 3, the next waits.
	batch := "[" + event("evt_rate_1", "acme") + "," + event("evt_rate_2", "acme") + "," + event("evt_rate_3", "acme") + "]"
	h := map[string]string{"Content-Type": "application/cloudevents-batch+json", "Authorization": "Bearer " + acmeRate}
	if r := send(t, http.MethodPost, url, h, batch); r.status != http.StatusAccepted {
		t.Fatalf("batch within the burst: %d %s", r.status, r.body)
	}
	r := post(acmeRate, event("evt_rate_4", "acme"))
	if st, _ := r.problem(t); r.status != http.StatusTooManyRequests || st != 429 || r.header.Get("Retry-After") == "" {
		t.Errorf("over the rate: %d Retry-After %q\n%s", r.status, r.header.Get("Retry-After"), r.body)
	}
	// Another key of the same tenant has its own bucket (no per-tenant limit here).
	if r := post(acme, event("evt_rate_5", "acme")); r.status != http.StatusAccepted {
		t.Errorf("another key after the limit: %d %s", r.status, r.body)
	}

	// The CLI publishes with --key.
	out, code := cliRun(t, dir, []string{"HUB_INGRESS_URL=" + url}, "publish", "--type", "identity.user.erased", "--tenant", "acme",
		"--key", acme, "--data", `{"erasure_id":"era_cli","user_id":"u1"}`)
	if code != 0 {
		t.Errorf("publish --key: exit %d\n%s", code, out)
	}
	if out, code := cliRun(t, dir, []string{"HUB_INGRESS_URL=" + url}, "publish", "--type", "identity.user.erased", "--tenant", "acme",
		"--data", `{"erasure_id":"era_cli","user_id":"u1"}`); code != 5 {
		t.Errorf("publish without a key: exit %d, want 5 (denied)\n%s", code, out)
	}

	t.Run("NonLoopbackWithoutCredentials", func(t *testing.T) {
		t.Parallel()
		d := t.TempDir()
		cfg := writeConfig(t, d, `
store: {sqlite: data/hub.db}
sources:
  in: {type: http, listen: "0.0.0.0:`+portOf(freeAddr(t))+`"}
transports:
  t: {type: kdbstream, stream: s}
routes:
  - {pattern: "#", to: t}
admin: {listen: "off"}
`)
		out, code := cliRun(t, d, nil, "run", "-c", cfg)
		if code != 1 || !strings.Contains(out, "sources.in.auth") || !strings.Contains(out, "needs credentials") {
			t.Errorf("run: exit %d, want 1 naming sources.in.auth\n%s", code, out)
		}
	})
}
