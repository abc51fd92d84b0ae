package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	"github.com/koder/eventhub/transports/webhook"
)

// uiHub is a running binary for the browser tests: the ingress, a webhook transport
// whose receiver the test controls, a kdbstream source (its DLQ), the outbox, and the
// console with an admin token.
type uiHub struct {
	dir, admin, ingress, token string
	base                       string // http://admin
	recv                       *uiReceiver
	proc                       *hubProc
}

// uiReceiver answers 204, or 503 while failing is set; it keeps the secret it
// verifies signatures with once the test has read it from the console.
type uiReceiver struct {
	srv     *httptest.Server
	failing atomic.Bool
	mu      sync.Mutex
	secret  string
	got     int
	bad     int
}

func newUIReceiver(t *testing.T) *uiReceiver {
	rc := &uiReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got++
		if rc.secret != "" && webhook.Verify(r.Header.Get(webhook.SignatureHeader), body, [][]byte{[]byte(rc.secret)}, time.Minute, time.Now()) != nil {
			rc.bad++
		}
		rc.mu.Unlock()
		if rc.failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":"receiver down for maintenance"}`)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func startUIHub(t *testing.T, extraAdmin string) *uiHub {
	t.Helper()
	h := &uiHub{dir: t.TempDir(), admin: freeAddr(t), ingress: freeAddr(t), token: auth.GenerateAdminToken(), recv: newUIReceiver(t)}
	h.base = "http://" + h.admin
	cfg := writeConfig(t, h.dir, sprintf(`
store:
  sqlite: data/hub.db
secrets:
  key_file: data/hub.db.key
  create_key_file: true
sources:
  ingress:
    type: http
    listen: %[1]s
  from_kdb:
    type: kdbstream
    stream: in
    group: hub-ingest
    consumer: ui
    block: 200ms
transports:
  events:
    type: kdbstream
    stream: events
  webhooks:
    type: webhook
    allow: ["127.0.0.1"]
    retry_schedule: ["300ms", "300ms", "300ms", "300ms", "300ms"]
    jitter: -1
    breaker_threshold: 2
    breaker_pause: 3s
    cache_ttl: -1ns
routes:
  - pattern: "#"
    to: events
    delivery: outbox
    default_subject: unspecified
  - pattern: "*"
    to: webhooks
    delivery: outbox
admin:
  listen: %[2]s
  token: %[3]s
  ui:
    sample_every: 250ms
%[4]s`, h.ingress, h.admin, h.token, extraAdmin))
	h.proc = startHubEnv(t, cfg, h.admin)
	return h
}

// publish posts one event through the ingress.
func (h *uiHub) publish(t *testing.T, tenant, typ string) string {
	t.Helper()
	id := cloudevent.NewID()
	body := `{"specversion":"1.0","id":"` + id + `","source":"/ui-test","type":"` + typ + `","subject":"u1","tenantid":"` + tenant + `",` +
		`"datacontenttype":"application/json","data":{"order_id":"o-1","amount":42}}`
	st, out, err := postJSON("http://"+h.ingress+"/events", "application/cloudevents+json", "", []byte(body))
	if err != nil || st/100 != 2 {
		t.Fatalf("publish: %d %s %v", st, out, err)
	}
	return id
}

// signIn signs the browser in with the admin token.
func (h *uiHub) signIn(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, "sign in",
		chromedp.Navigate(h.base+"/ui/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), h.token),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID("overview-panel")))
	if title := get(t, ctx, "title", chromedp.Title()); !strings.HasPrefix(title, "Overview") {
		t.Fatalf("after sign-in the title is %q", title)
	}
}

// TestUI_Console clicks through the operator console in Chromium: sign in, register an
// endpoint (after the SSRF rules refuse a metadata address inline), post an event
// through the ingress and watch its delivery succeed, make the receiver fail and see
// the retries, the attempts' statuses and the breaker open, resend, replay and purge a
// dead letter, and take the README's screenshots.
func TestUI_Console(t *testing.T) {
	t.Parallel()
	h := startUIHub(t, "")
	ctx := browser(t)

	// Without a session every page leads to the sign-in form; a wrong token is refused.
	do(t, ctx, "wrong token",
		chromedp.Navigate(h.base+"/ui/deliveries"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), "eha_wrong-token-for-this-hub-xxxxxxxx"),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS(".alert")))
	if alert := text(t, ctx, ".alert"); !strings.Contains(alert, "not accepted") {
		t.Fatalf("wrong token: alert %q", alert)
	}
	checkA11y(t, ctx)
	h.signIn(t, ctx)
	checkA11y(t, ctx)

	// Keyboard: the first Tab reaches the skip link, Enter moves focus to the content.
	do(t, ctx, "keyboard", chromedp.KeyEvent("\t"))
	if f := get(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement.className`)); f != "skip" {
		t.Fatalf("the first Tab focuses %q, want the skip link", f)
	}
	do(t, ctx, "skip", chromedp.KeyEvent("\r"))
	if f := get(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement.id`)); f != "main" {
		t.Fatalf("the skip link moved focus to %q, want main", f)
	}

	// The SSRF rules give their reason beside the URL field.
	do(t, ctx, "endpoint refused by the SSRF rules",
		chromedp.Navigate(h.base+"/ui/endpoints"),
		chromedp.WaitVisible(chromedp.ID("ep-url")),
		chromedp.SendKeys(chromedp.ID("ep-url"), "http://169.254.169.254/latest/meta-data"),
		chromedp.Submit(chromedp.ID("ep-url")),
		chromedp.WaitVisible(chromedp.ID("ep-url-err")))
	urlErr := text(t, ctx, "#ep-url-err")
	invalid := get(t, ctx, "aria-invalid", chromedp.AttributeValue(chromedp.ID("ep-url"), "aria-invalid"))
	if !strings.Contains(urlErr, "link-local") || invalid.Value != "true" {
		t.Fatalf("SSRF refusal shown as %q (aria-invalid %q)", urlErr, invalid.Value)
	}
	checkA11y(t, ctx)

	// Register the receiver; the secret is shown once.
	do(t, ctx, "register an endpoint",
		chromedp.SetValue(chromedp.ID("ep-url"), h.recv.srv.URL+"/hooks"),
		chromedp.SetValue(chromedp.ID("ep-types"), "order.*"),
		chromedp.SetValue(chromedp.ID("ep-desc"), "orders receiver"),
		chromedp.Submit(chromedp.ID("ep-url")),
		chromedp.WaitVisible(chromedp.ID("secret-value")))
	secret := strings.TrimSpace(text(t, ctx, "#secret-value"))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret shown: %q", secret)
	}
	h.recv.mu.Lock()
	h.recv.secret = secret
	h.recv.mu.Unlock()
	epID := strings.TrimSpace(text(t, ctx, "h1 .mono"))
	epURL := h.base + "/ui/endpoints/" + epID
	do(t, ctx, "endpoint page", chromedp.Navigate(epURL), chromedp.WaitVisible(chromedp.CSS("h1")))
	if strings.Contains(text(t, ctx, "main"), secret) {
		t.Fatal("the signing secret is shown again on a later visit")
	}

	// An event through the ingress: its delivery appears and succeeds.
	h.publish(t, "acme", "order.created")
	waitText(t, ctx, h.base+"/ui/deliveries", "#delivery-rows", "delivered", 30*time.Second)

	// The receiver fails: retries, then the breaker opens (threshold 2).
	h.recv.failing.Store(true)
	failedEv := h.publish(t, "acme", "order.paid")
	waitText(t, ctx, h.base+"/ui/deliveries?type=order.paid", "#delivery-rows", failedEv, 30*time.Second)
	waitText(t, ctx, epURL, "#br-h + p", "open", 30*time.Second)
	// Two attempts failed (the breaker's threshold); the delivery waits, snoozed, for the
	// breaker's probe, without spending its remaining attempts. (The pause is 3 s: the
	// probe, its failure and the next snooze make "3/6"; a shorter pause left a loaded
	// machine's page polls too little time to see "2/6".)
	waitText(t, ctx, h.base+"/ui/deliveries?type=order.paid&state=pending", "#delivery-rows", "2/6", 30*time.Second)
	do(t, ctx, "open the failing delivery",
		chromedp.Navigate(h.base+"/ui/deliveries?type=order.paid"),
		chromedp.WaitVisible(chromedp.CSS("#delivery-rows tbody td.num a")),
		chromedp.Click(chromedp.CSS("#delivery-rows tbody td.num a")),
		chromedp.WaitVisible(chromedp.ID("at-h")))
	checkA11y(t, ctx)
	delivery := text(t, ctx, "main")
	for _, want := range []string{"503", "receiver down for maintenance", " ms"} {
		if !strings.Contains(delivery, want) {
			t.Fatalf("the delivery page lacks %q:\n%s", want, delivery)
		}
	}

	// The receiver is back; resend the delivery by hand: it goes once the breaker lets
	// a probe through, and the breaker closes.
	h.recv.failing.Store(false)
	deliveryURL, _, _ := strings.Cut(get(t, ctx, "location", chromedp.Location()), "?")
	do(t, ctx, "resend",
		chromedp.Click(chromedp.CSS(`form[action$="/resend"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".flash")))
	waitText(t, ctx, deliveryURL, "#d-h + dl", "delivered", 30*time.Second)
	hist := waitText(t, ctx, epURL, "#br-h ~ table", "closed", 30*time.Second)
	for _, want := range []string{"open", "half_open", "closed"} {
		if !strings.Contains(hist, want) {
			t.Fatalf("breaker history lacks %q: %s", want, hist)
		}
	}
	checkA11y(t, ctx)
	screenshot(t, ctx, "endpoint")
	do(t, ctx, "the delivery again", chromedp.Navigate(deliveryURL), chromedp.WaitVisible(chromedp.ID("at-h")))
	screenshot(t, ctx, "delivery")

	// Send a test event from the endpoint page.
	do(t, ctx, "send a test event", chromedp.Navigate(epURL),
		chromedp.Click(chromedp.CSS(`form[action$="/test"] button`)), chromedp.WaitVisible(chromedp.CSS(".flash")))
	waitText(t, ctx, h.base+"/ui/deliveries?type=hub.webhook.test", "#delivery-rows", "delivered", 30*time.Second)

	// Resend all matching a filter.
	do(t, ctx, "resend all matching", chromedp.Navigate(h.base+"/ui/deliveries?type=order.%2A&state=delivered"),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/deliveries/resend"] button`)),
		acceptConfirms,
		chromedp.Click(chromedp.CSS(`form[action$="/deliveries/resend"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".flash")))
	if f := text(t, ctx, ".flash"); !strings.Contains(f, "2 deliveries queued") {
		t.Fatalf("bulk resend: %q, want 2 deliveries (order.created and order.paid, delivered)", f)
	}

	// A malformed entry on the kdbstream source goes to its DLQ at once (N2): inspect,
	// replay (it comes back: still malformed) and purge it.
	eng, err := kdbstream.OpenEngine(ctx, "sqlite://"+filepath.Join(h.dir, "data", "hub.db"))
	must(t, err)
	_, _, err = eng.XAdd(ctx, engine.Add{Stream: "in", Values: []string{"type", "order.created", "data", "{}"}})
	must(t, err)
	_ = eng.Close()
	waitText(t, ctx, h.base+"/ui/dlq/from_kdb", "main", "order.created", 30*time.Second)
	do(t, ctx, "inspect the dead letter",
		chromedp.Click(chromedp.CSS(`main tbody td.mono a`)),
		chromedp.WaitVisible(chromedp.ID("f-h")))
	checkA11y(t, ctx)
	if entry := text(t, ctx, "main"); !strings.Contains(entry, "malformed") {
		t.Fatalf("dead letter page:\n%s", entry)
	}
	do(t, ctx, "replay the dead letter",
		chromedp.Click(chromedp.CSS(`form[action$="/replay"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".flash")))
	waitText(t, ctx, h.base+"/ui/dlq/from_kdb", "main", "order.created", 30*time.Second)
	do(t, ctx, "purge every dead letter",
		acceptConfirms,
		chromedp.Click(chromedp.CSS(`form[action$="/purge"] input[name=all] ~ button`)),
		chromedp.WaitVisible(chromedp.CSS(".flash")))
	waitText(t, ctx, h.base+"/ui/dlq/from_kdb", "main", "No entry", 10*time.Second)

	// Outbox, schemas (validate), live tail.
	waitText(t, ctx, h.base+"/ui/outbox", "main", "Rows by destination", 10*time.Second)
	do(t, ctx, "validate JSON against a schema",
		chromedp.Navigate(h.base+"/ui/schemas/identity.user.erased"),
		chromedp.WaitVisible(chromedp.ID("json")),
		chromedp.SetValue(chromedp.ID("json"), `{"user_id": 7}`),
		chromedp.Submit(chromedp.ID("json")),
		chromedp.WaitVisible(chromedp.ID("val-result")))
	checkA11y(t, ctx)
	if verdict := text(t, ctx, "#val-result"); !strings.Contains(verdict, "Invalid") || !strings.Contains(verdict, "/") {
		t.Fatalf("validation result: %q", verdict)
	}
	do(t, ctx, "live tail",
		chromedp.Navigate(h.base+"/ui/streams?pattern=order.%23"),
		chromedp.WaitVisible(chromedp.ID("tail-status")))
	waitStatus := func(want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			s := text(t, ctx, "#tail-status")
			if strings.Contains(s, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("tail status %q never showed %q", s, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitStatus("Live")
	checkA11y(t, ctx)
	tailed := h.publish(t, "acme", "order.shipped")
	do(t, ctx, "tailed event", chromedp.WaitVisible(chromedp.CSS(`#tail-list li`)))
	if list := text(t, ctx, "#tail-list"); !strings.Contains(list, tailed) {
		t.Fatalf("the tail shows %q, want event %s", list, tailed)
	}
	do(t, ctx, "pause", chromedp.Click(chromedp.ID("tail-toggle")))
	h.publish(t, "acme", "order.shipped")
	waitStatus("1 waiting")

	// The overview, with charts drawn from the samples of this run.
	for range 3 {
		h.publish(t, "acme", "order.created")
	}
	do(t, ctx, "overview", chromedp.Navigate(h.base+"/ui/"), chromedp.WaitVisible(chromedp.CSS("svg.chart polyline")))
	if desc := get(t, ctx, "chart description", chromedp.TextContent(chromedp.ID("c-deliveries-d"))); !strings.Contains(desc, "Now:") {
		t.Fatalf("chart description %q", desc)
	}
	// Every line drawn has its colour key beside its figure under the chart (the legend).
	unkeyed := get(t, ctx, "chart legends", chromedp.Evaluate[[]string](`[...document.querySelectorAll("section.card")].flatMap(card => {
		const keys = new Set([...card.querySelectorAll(".stats .key")].map(k => [...k.classList].find(c => /^s[0-9]$/.test(c))));
		return [...card.querySelectorAll("svg.chart polyline")].map(l => [...l.classList].find(c => /^s[0-9]$/.test(c)))
			.filter(c => !keys.has(c)).map(c => card.getAttribute("aria-label") + ": " + c);
	})`))
	if len(unkeyed) > 0 {
		t.Fatalf("chart lines without a key under their chart: %v", unkeyed)
	}
	checkA11y(t, ctx)
	screenshot(t, ctx, "overview")
	do(t, ctx, "deliveries", chromedp.Navigate(h.base+"/ui/deliveries"), chromedp.WaitVisible(chromedp.ID("delivery-rows")))
	checkA11y(t, ctx)
	screenshot(t, ctx, "deliveries")

	h.recv.mu.Lock()
	defer h.recv.mu.Unlock()
	if h.recv.bad > 0 {
		t.Fatalf("%d deliveries failed signature verification with the secret the console showed", h.recv.bad)
	}
}
