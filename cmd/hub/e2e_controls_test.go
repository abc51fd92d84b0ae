package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/koder/eventhub/cloudevent"
)

func adminDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDC_AdminEndpointControls: the admin API sets an endpoint's delivery controls,
// refuses a bad filter (400 with its line:col) and a reserved header (400 naming it),
// changes one control on PATCH leaving the others, and shows them with header values
// redacted and the rate limiter's state.
func TestDC_AdminEndpointControls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	admin := freeAddr(t)
	cfg := writeConfig(t, dir, `
store: {sqlite: data/hub.db}
transports:
  webhooks: {type: webhook, allow: [127.0.0.1], max_queued_per_endpoint: 10000, max_in_flight_per_endpoint: 16}
routes:
  - {pattern: "*", to: webhooks, filter: "tenantid = 'acme'"}
admin: {listen: `+admin+`}
`)
	startHub(t, cfg, admin)
	base := "http://" + admin + "/endpoints"

	status, body := adminDo(t, http.MethodPost, base, `{"url":"http://127.0.0.1:9/x","controls":{"filter":"data.plan = = 'pro'"}}`)
	if status != http.StatusBadRequest || !strings.Contains(body, "1:13") {
		t.Fatalf("bad filter: %d %s", status, body)
	}
	status, body = adminDo(t, http.MethodPost, base, `{"url":"http://127.0.0.1:9/x","controls":{"headers":{"Webhook-Signature":"forged"}}}`)
	if status != http.StatusBadRequest || !strings.Contains(body, "headers[Webhook-Signature]") {
		t.Fatalf("reserved header: %d %s", status, body)
	}
	status, body = adminDo(t, http.MethodPost, base, `{"url":"http://127.0.0.1:9/x","controls":{
		"filter":"data.plan = 'pro'","headers":{"Authorization":"Bearer s3cret"},
		"signature":{"scheme":"stripe"},"rate_limit":{"rps":5,"burst":2},
		"ordering":{"enabled":true,"on_dead":"skip"},"max_in_flight":4}}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var ep struct{ ID string }
	_ = json.Unmarshal([]byte(body), &ep)
	if strings.Contains(body, "s3cret") {
		t.Fatalf("a static header value is shown: %s", body)
	}
	status, body = adminDo(t, http.MethodPatch, base+"/"+ep.ID, `{"controls":{"filter":"data.plan = 'team'"}}`)
	if status != http.StatusOK {
		t.Fatalf("patch: %d %s", status, body)
	}
	if status, body := adminDo(t, http.MethodPatch, base+"/"+ep.ID, `{"controls":{"max_in_flight":-1}}`); status != http.StatusBadRequest ||
		!strings.Contains(body, "max_in_flight") {
		t.Fatalf("a negative max_in_flight: %d %s", status, body)
	}
	// The CLI's flag sets the same control (the other controls stay).
	if out, code := cliRun(t, dir, []string{"HUB_ADMIN_URL=http://" + admin}, "endpoints", "update", ep.ID, "--max-in-flight", "8"); code != 0 {
		t.Fatalf("hub endpoints update --max-in-flight: exit %d\n%s", code, out)
	}
	status, body = adminDo(t, http.MethodGet, base+"/"+ep.ID, "")
	var v struct {
		Controls struct {
			Filter      string            `json:"filter"`
			Headers     map[string]string `json:"headers"`
			Signature   struct{ Scheme string }
			RateLimit   struct{ RPS float64 } `json:"rate_limit"`
			MaxInFlight int                   `json:"max_in_flight"`
		} `json:"controls"`
		Rate *struct{ Available int } `json:"rate"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || status != http.StatusOK {
		t.Fatalf("get: %d %s %v", status, body, err)
	}
	if v.Controls.Filter != "data.plan = 'team'" || v.Controls.Signature.Scheme != "stripe" || v.Controls.RateLimit.RPS != 5 ||
		v.Controls.Headers["Authorization"] != "[redacted]" || v.Rate == nil || v.Rate.Available != 2 || v.Controls.MaxInFlight != 8 {
		t.Fatalf("endpoint view after PATCH: %s", body)
	}
}

// TestDC_FanOutLimitAtIngress: when the webhook deliveries are written in the ingress's
// own transaction (outbox and webhooks on one store), an event over the transport's
// max_endpoints_per_event is refused to the publisher with 429 and nothing is stored;
// an event under the cap is accepted.
func TestDC_FanOutLimitAtIngress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ingress, admin := freeAddr(t), freeAddr(t)
	cfg := writeConfig(t, dir, `
store: {sqlite: data/hub.db}
sources:
  ingress: {type: http, listen: "`+ingress+`"}
transports:
  webhooks: {type: webhook, allow: [127.0.0.1], max_endpoints_per_event: 1}
routes:
  - {pattern: "*", to: webhooks, delivery: outbox}
admin: {listen: `+admin+`}
`)
	startHub(t, cfg, admin)
	base := "http://" + admin + "/endpoints"
	if status, body := adminDo(t, http.MethodPost, base, `{"url":"http://127.0.0.1:9/a","tenant":"acme"}`); status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	id := cloudevent.NewID()
	if status, body, err := postJSON("http://"+ingress+"/events", "application/cloudevents+json", "", erasedEvent(id)); err != nil || status != http.StatusAccepted {
		t.Fatalf("under the cap: %d %v %s", status, err, body)
	}
	if status, body := adminDo(t, http.MethodPost, base, `{"url":"http://127.0.0.1:9/b","tenant":"acme"}`); status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	over := cloudevent.NewID()
	status, body, err := postJSON("http://"+ingress+"/events", "application/cloudevents+json", "", erasedEvent(over))
	if err != nil || status != http.StatusTooManyRequests || !strings.Contains(string(body), "acme") {
		t.Fatalf("over the cap: %d %v %s, want 429 naming the tenant", status, err, body)
	}
	status, page := adminDo(t, http.MethodGet, "http://"+admin+"/deliveries?event="+over, "")
	if status != http.StatusOK || strings.Contains(page, over) {
		t.Fatalf("deliveries of the refused event: %d %s, want none", status, page)
	}
}
