package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/koder/eventhub/cmd/hub/internal/ui"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/webhook"
)

// api calls the admin API with the hub's token.
func (h *uiHub) api(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, h.base+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// endpointFor registers an endpoint of tenant on the receiver through the admin API.
func (h *uiHub) endpointFor(t *testing.T, tenant string) string {
	t.Helper()
	st, b := h.api(t, http.MethodPost, "/endpoints", map[string]any{"url": h.recv.srv.URL + "/" + tenant, "tenant": tenant, "types": []string{"order.#"}})
	if st != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", st, b)
	}
	var v struct{ ID string }
	must(t, json.Unmarshal(b, &v))
	return v.ID
}

// deliveriesOf lists an endpoint's deliveries through the admin API.
func (h *uiHub) deliveriesOf(t *testing.T, endpoint string) []map[string]any {
	t.Helper()
	st, b := h.api(t, http.MethodGet, "/deliveries/page?endpoint="+endpoint, nil)
	if st != http.StatusOK {
		t.Fatalf("deliveries: %d %s", st, b)
	}
	var p struct{ Deliveries []map[string]any }
	must(t, json.Unmarshal(b, &p))
	return p.Deliveries
}

// portalLink issues a link with `hub portal link` and returns the portal URL.
func (h *uiHub) portalLink(t *testing.T, tenant, ttl string) string {
	t.Helper()
	out, code := cliRun(t, h.dir, []string{"HUB_ADMIN_URL=" + h.base, "HUB_ADMIN_TOKEN=" + h.token}, "portal", "link", "--tenant", tenant, "--ttl", ttl)
	if code != 0 {
		t.Fatalf("hub portal link: exit %d\n%s", code, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, h.base+"/ui/portal?link=ehl_") {
			return strings.TrimSpace(l)
		}
	}
	t.Fatalf("hub portal link printed no portal URL:\n%s", out)
	return ""
}

// TestUI_Portal opens a tenant's portal link in Chromium, embedded in an iframe of the
// tenant's own site (frame-ancestors), and checks it sees and changes only its own
// tenant's endpoints and deliveries: another tenant's objects are not listed, their
// pages are 404 and posts to them change nothing, even with a valid CSRF token. An
// expired link is refused.
func TestUI_Portal(t *testing.T) {
	t.Parallel()
	// The tenant's site, on another site than the hub (localhost vs 127.0.0.1).
	site := httptest.NewUnstartedServer(nil)
	siteURL := "http://localhost:" + strconv.Itoa(site.Listener.Addr().(*net.TCPAddr).Port)
	h := startUIHub(t, "    frame_ancestors: [\""+siteURL+"\"]\n    theme: {accent: \"#0f766e\", radius: \"10px\"}\n")
	acmeEP, globexEP := h.endpointFor(t, "acme"), h.endpointFor(t, "globex")
	acmeEv, globexEv := h.publish(t, "acme", "order.created"), h.publish(t, "globex", "order.created")
	// Delivered, not only listed: the delivery row exists from the ingress's commit, its
	// attempts only once the first attempt finished (the delivery page shows them, and
	// the bulk resend below compares globex's attempt count).
	delivered := func(ep string) bool {
		ds := h.deliveriesOf(t, ep)
		return len(ds) > 0 && ds[0]["state"] == string(webhook.DeliveryDelivered)
	}
	testenv.WaitFor(t, 30*time.Second, "both tenants' deliveries delivered", func() bool { return delivered(acmeEP) && delivered(globexEP) })
	globexDelivery := strconv.Itoa(int(h.deliveriesOf(t, globexEP)[0]["id"].(float64)))
	link := h.portalLink(t, "acme", "1h")

	ctx := browser(t)
	// Only acme's endpoint is listed; the tenant field is not offered.
	do(t, ctx, "open the portal", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("ep-url")))
	page := text(t, ctx, "main")
	if !strings.Contains(page, acmeEP) || strings.Contains(page, globexEP) {
		t.Fatalf("acme's portal lists:\n%s", page)
	}
	if n := get(t, ctx, "tenant field", chromedp.Evaluate[int](`document.querySelectorAll("#ep-tenant").length`)); n != 0 {
		t.Fatal("the portal offers a tenant field")
	}
	// Deliveries: acme's event only, with its attempts.
	do(t, ctx, "deliveries", chromedp.Click(chromedp.CSS(`nav a[href*="/deliveries"]`)), chromedp.WaitVisible(chromedp.ID("delivery-rows")))
	rows := text(t, ctx, "#delivery-rows")
	if !strings.Contains(rows, acmeEv) || strings.Contains(rows, globexEv) {
		t.Fatalf("acme's deliveries:\n%s", rows)
	}
	do(t, ctx, "a delivery", chromedp.Click(chromedp.CSS("#delivery-rows tbody td.num a")), chromedp.WaitVisible(chromedp.ID("at-h")))
	if at := text(t, ctx, "main"); !strings.Contains(at, "204") {
		t.Fatalf("acme's delivery page:\n%s", at)
	}
	do(t, ctx, "resend", chromedp.Click(chromedp.CSS(`form[action*="/resend"] button`)), chromedp.WaitVisible(chromedp.CSS(".flash")))

	// Add an endpoint: it is acme's.
	do(t, ctx, "add an endpoint", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("ep-url")),
		chromedp.SetValue(chromedp.ID("ep-url"), h.recv.srv.URL+"/acme-2"),
		chromedp.Submit(chromedp.ID("ep-url")), chromedp.WaitVisible(chromedp.ID("secret-value")))
	newEP := strings.TrimSpace(text(t, ctx, "h1 .mono"))
	st, b := h.api(t, http.MethodGet, "/endpoints/"+newEP, nil)
	if st != http.StatusOK || !strings.Contains(string(b), `"tenant": "acme"`) {
		t.Fatalf("the portal's new endpoint: %d %s", st, b)
	}
	// Rotate its secret: the new one is shown once.
	first := text(t, ctx, "#secret-value")
	do(t, ctx, "rotate", acceptConfirms, chromedp.Click(chromedp.CSS(`form[action*="/rotate"] button`)))
	seeText(t, ctx, ".flash", "Secret rotated")
	if again := text(t, ctx, "#secret-value"); again == first || !strings.HasPrefix(again, "whsec_") {
		t.Fatalf("rotation showed %q after %q", again, first)
	}

	// Another tenant's endpoint or delivery by URL: not found, as if it did not exist.
	lq := link[strings.Index(link, "?"):]
	for _, p := range []string{"/ui/portal/endpoints/" + globexEP, "/ui/portal/deliveries/" + globexDelivery} {
		do(t, ctx, "globex's "+p, chromedp.Navigate(h.base+p+lq), chromedp.WaitVisible(chromedp.CSS("h1")))
		if h1 := text(t, ctx, "h1"); h1 != "Not Found" {
			t.Fatalf("acme's link on %s shows %q", p, h1)
		}
	}
	// Posts to them with a valid CSRF token change nothing.
	c := formClient(t)
	resp, err := c.Get(link)
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	token := csrfOf(t, string(body))
	_, before := h.api(t, http.MethodGet, "/endpoints/"+globexEP, nil)
	for _, p := range []string{"/ui/portal/endpoints/" + globexEP + "/rotate", "/ui/portal/endpoints/" + globexEP,
		"/ui/portal/endpoints/" + globexEP + "/test", "/ui/portal/deliveries/" + globexDelivery + "/resend"} {
		req, _ := http.NewRequest(http.MethodPost, h.base+p+lq, strings.NewReader(url.Values{"_csrf": {token}, "types": {"#"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := c.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("acme's link POST %s: %d, want 404", p, resp.StatusCode)
		}
	}
	if _, after := h.api(t, http.MethodGet, "/endpoints/"+globexEP, nil); !bytes.Equal(before, after) {
		t.Fatalf("globex's endpoint changed:\n%s\n%s", before, after)
	}
	// Acme's bulk resend touches acme's deliveries only.
	globexBefore := h.deliveriesOf(t, globexEP)[0]["attempt"]
	req, _ := http.NewRequest(http.MethodPost, h.base+"/ui/portal/deliveries/resend"+lq, strings.NewReader(url.Values{"_csrf": {token}, "tenant": {"globex"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = c.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("bulk resend: %d", resp.StatusCode)
	}
	time.Sleep(500 * time.Millisecond) // a resend of globex's delivery would have run by now
	if after := h.deliveriesOf(t, globexEP)[0]["attempt"]; after != globexBefore {
		t.Fatalf("acme's bulk resend resent globex's delivery (attempt %v -> %v)", globexBefore, after)
	}

	// Embedded in the tenant's site: the portal loads in the iframe, themed.
	site.Config = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html><head><meta charset="utf-8"><title>Acme settings</title></head>
<body style="font-family:sans-serif;margin:0;background:#e2e8f0"><div style="padding:12px 20px;background:#0f172a;color:#fff">
<b>Acme Inc.</b> · Settings · Webhooks</div>
<iframe title="Webhooks" src="`+link+`&accent=%230f766e" style="border:0;width:100%;height:820px"></iframe></body></html>`)
	})}
	site.Start()
	t.Cleanup(site.Close)
	do(t, ctx, "embed", chromedp.Navigate(siteURL+"/settings"), chromedp.WaitVisible(chromedp.CSS("iframe")))
	frame := waitFrame(t, ctx, h.base+"/ui/portal")
	if h := get(t, frame, "portal in the iframe", chromedp.Text(chromedp.CSS("h1"))); h != "Endpoints" {
		t.Fatalf("the embedded portal shows %q", h)
	}
	screenshot(t, ctx, "portal")

	// The console itself can never be framed; the portal only by the configured site.
	for p, want := range map[string]string{"/ui/login": "frame-ancestors 'none'", "/ui/portal" + lq: "frame-ancestors " + siteURL} {
		resp, err := http.Get(h.base + p)
		must(t, err)
		resp.Body.Close()
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, want) {
			t.Errorf("%s: CSP %q lacks %q", p, csp, want)
		}
	}

	// An expired link is refused.
	short := h.portalLink(t, "acme", "3s")
	do(t, ctx, "short link", chromedp.Navigate(short), chromedp.WaitVisible(chromedp.ID("ep-url")))
	deadline := time.Now().Add(25 * time.Second) // 3s of life plus the verifier's 5s clock skew
	for {
		resp, err := http.Get(short)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the expired link still answers %d", resp.StatusCode)
		}
		time.Sleep(250 * time.Millisecond)
	}
	do(t, ctx, "expired link", chromedp.Navigate(short), chromedp.WaitVisible(chromedp.CSS(".alert")))
	if a := text(t, ctx, ".alert"); !strings.Contains(a, "expired") {
		t.Fatalf("expired link page: %q", a)
	}
}

// seeText waits (without reloading) until sel's text contains want.
func seeText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		got, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
		cancel()
		if err == nil && strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed %q (last %q, %v)\n%s", sel, want, got, err, pageText(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFrame returns a context on the cross-site iframe whose URL starts with prefix
// (Chromium runs it as its own target).
func waitFrame(t *testing.T, ctx context.Context, prefix string) context.Context {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		infos, err := chromedp.Targets(ctx)
		must(t, err)
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, prefix) {
				fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				return fctx
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no iframe target at %s", prefix)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestUI_CSRF posts to every console and portal action from another site, in
// Chromium, with the operator signed in: each is refused (the request guard's Origin
// check; the SameSite=Strict cookie is not even sent), and nothing changes. Then the
// same posts from the console's own origin without the CSRF token, or with another
// session's, are refused too: the token does not depend on the browser's headers.
func TestUI_CSRF(t *testing.T) {
	t.Parallel()
	h := startUIHub(t, "")
	ep := h.endpointFor(t, "acme")
	h.publish(t, "acme", "order.created")
	deadline := time.Now().Add(30 * time.Second)
	for len(h.deliveriesOf(t, ep)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no delivery")
		}
		time.Sleep(100 * time.Millisecond)
	}
	delivery := strconv.Itoa(int(h.deliveriesOf(t, ep)[0]["id"].(float64)))
	link := h.portalLink(t, "acme", "1h")
	lq := link[strings.Index(link, "?"):]
	fill := strings.NewReplacer("{id}", ep, "{name}", "from_kdb", "{type}", "identity.user.erased")
	var targets []string
	for _, a := range ui.Actions() {
		p := strings.TrimPrefix(a, "POST ")
		if strings.Contains(p, "/deliveries/{id}") {
			p = strings.Replace(p, "{id}", delivery, 1)
		}
		p = fill.Replace(p)
		if strings.HasPrefix(p, "/ui/portal") {
			p += lq
		}
		targets = append(targets, p)
	}
	if len(targets) < 19 {
		t.Fatalf("only %d actions: %v", len(targets), targets)
	}
	_, before := h.api(t, http.MethodGet, "/endpoints/"+ep, nil)

	// The attacker's page posts a form to the action it is asked for.
	evil := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		action := r.URL.Query().Get("to")
		_, _ = io.WriteString(w, `<!doctype html><form id="f" method="post" action="`+h.base+action+`">`+
			`<input name="url" value="https://evil.example/x"><input name="types" value="#"><input name="all" value="on">`+
			`<input name="id" value="`+delivery+`"><input name="json" value="{}"></form><script>document.getElementById("f").submit()</script>`)
	}))
	evil.Start()
	t.Cleanup(evil.Close)
	evilURL := "http://localhost:" + strconv.Itoa(evil.Listener.Addr().(*net.TCPAddr).Port)

	ctx := browser(t)
	h.signIn(t, ctx)
	for _, p := range targets {
		do(t, ctx, "cross-site post to "+p, chromedp.Navigate(evilURL+"/?to="+url.QueryEscape(p)))
		deadline := time.Now().Add(10 * time.Second)
		for {
			loc := get(t, ctx, "location", chromedp.Location())
			if strings.HasPrefix(loc, h.base) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the form to %s was not submitted (at %s)", p, loc)
			}
			time.Sleep(50 * time.Millisecond)
		}
		do(t, ctx, "answer", chromedp.WaitVisible(chromedp.CSS("h1")))
		if h1 := text(t, ctx, "h1"); h1 != "Forbidden" {
			t.Errorf("cross-site POST %s answered %q, want Forbidden\n%s", p, h1, pageText(ctx))
		}
	}
	if _, after := h.api(t, http.MethodGet, "/endpoints/"+ep, nil); !bytes.Equal(before, after) {
		t.Fatalf("a cross-site post changed the endpoint:\n%s\n%s", before, after)
	}

	// Same origin, signed in, but no token or a wrong one: refused as well.
	c := formClient(t)
	resp, err := c.Get(h.base + "/ui/login")
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp, err = c.PostForm(h.base+"/ui/login", url.Values{"_csrf": {csrfOf(t, string(body))}, "token": {h.token}, "next": {"/ui/endpoints"}})
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d", resp.StatusCode)
	}
	for _, p := range targets {
		for _, tok := range []string{"", "forged-token-value"} {
			req, _ := http.NewRequest(http.MethodPost, h.base+p, strings.NewReader(url.Values{"_csrf": {tok}, "all": {"on"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", h.base)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			resp, err := c.Do(req)
			must(t, err)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with CSRF token %q: %d, want 403", p, tok, resp.StatusCode)
			}
		}
	}
	if _, after := h.api(t, http.MethodGet, "/endpoints/"+ep, nil); !bytes.Equal(before, after) {
		t.Fatalf("a post without the token changed the endpoint:\n%s\n%s", before, after)
	}
}
