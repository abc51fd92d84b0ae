package ui

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cmd/hub/internal/admin"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/schema"
	"github.com/koder/eventhub/transports/webhook"
)

// htmxSHA256 is the sum of the vendored htmx.min.js (static/README.md).
const htmxSHA256 = "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"

func TestUI_VendoredHTMX(t *testing.T) {
	t.Parallel()
	b, err := fs.ReadFile(files, "static/htmx.min.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != htmxSHA256 {
		t.Fatalf("static/htmx.min.js sha256 %s, want %s (update static/README.md and this test together)", got, htmxSHA256)
	}
	if _, err := fs.Stat(files, "static/htmx.LICENSE"); err != nil {
		t.Fatal("the htmx licence is not vendored beside it")
	}
}

// TestUI_TemplatesHaveNoInlineCode keeps the templates within the CSP: no style
// attribute, no event-handler attribute, no inline <script> or <style>, no javascript:
// URL. (The browser tests also record any violation at run time.)
func TestUI_TemplatesHaveNoInlineCode(t *testing.T) {
	t.Parallel()
	bad := regexp.MustCompile(`(?i)\sstyle=|\son[a-z]+=|<script(?:\s[^>]*)?>[^<]|<style|javascript:|hx-on`)
	names, _ := fs.Glob(files, "templates/*.html")
	if len(names) < 10 {
		t.Fatalf("templates: %v", names)
	}
	for _, n := range names {
		b, _ := fs.ReadFile(files, n)
		for _, m := range bad.FindAllString(string(b), -1) {
			t.Errorf("%s: %q breaks the Content-Security-Policy", n, m)
		}
	}
	for _, n := range []string{"static/console.js", "static/tail.js"} {
		b, _ := fs.ReadFile(files, n)
		if regexp.MustCompile(`innerHTML|eval\(|new Function`).Match(b) {
			t.Errorf("%s writes HTML or evaluates strings", n)
		}
	}
}

// testBundle is a console over a webhook transport on a SQLite ledger, with an
// operator token and a token scoped to tenant acme.
type testBundle struct {
	c        *Console
	srv      *admin.Server
	t        *webhook.Transport
	operator string
	acme     string
	reader   string
	eps      map[string]string // tenant -> endpoint id
	ctx      context.Context
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	l := ledgertest.Open(t, ledger.SQLite, ledger.Config{})
	tr, err := webhook.New(ctx, webhook.Config{NoWork: true, Allow: []string{"127.0.0.1"}, Logger: ledgertest.Logger(t)}, l)
	if err != nil {
		t.Fatal(err)
	}
	tb := &testBundle{t: tr, ctx: ctx, operator: auth.GenerateAdminToken(), acme: auth.GenerateAdminToken(), reader: auth.GenerateAdminToken(),
		eps: map[string]string{}}
	toks, err := auth.ParseAdminTokens(tb.operator+"\n"+tb.acme+" tenant=acme\n"+tb.reader+" scopes=read\n", "tokens")
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{"acme", "globex"} {
		ep, err := tr.CreateEndpoint(ctx, webhook.EndpointSpec{URL: "http://127.0.0.1:9/" + tenant, Patterns: []string{"#"}, TenantID: tenant})
		if err != nil {
			t.Fatal(err)
		}
		tb.eps[tenant] = ep.ID
	}
	tb.srv = &admin.Server{Access: admin.Access{Tokens: toks}, Logger: slog.New(slog.DiscardHandler),
		Transports: []admin.Transport{{Name: "webhooks", Type: "transport.webhook", Transport: tr, Module: whModule{tr}}}}
	tb.c, err = New(Config{Admin: tb.srv, Logger: slog.New(slog.DiscardHandler), Schemas: schema.Builtin(),
		UI: config.UI{FrameAncestors: []string{"https://app.example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// client is a browser-like client of the console: cookies, same-origin headers.
type client struct {
	tb      *testBundle
	cookies []*http.Cookie
	last    *httptest.ResponseRecorder
}

func (c *client) do(method, path string, form url.Values) *httptest.ResponseRecorder {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, path, body)
	req.Host, req.RemoteAddr = "127.0.0.1:8081", "127.0.0.1:40000"
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "http://127.0.0.1:8081")
	}
	for _, ck := range c.cookies {
		req.AddCookie(ck)
	}
	rec := httptest.NewRecorder()
	c.tb.c.ServeHTTP(rec, req)
	c.last = rec
	for _, ck := range rec.Result().Cookies() { // a cookie replaces its namesake, as in a browser
		kept := c.cookies[:0]
		for _, old := range c.cookies {
			if old.Name != ck.Name {
				kept = append(kept, old)
			}
		}
		c.cookies = kept
		if ck.MaxAge >= 0 && ck.Value != "" {
			c.cookies = append(c.cookies, ck)
		}
	}
	return rec
}

var csrfRE = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func (c *client) signIn(t *testing.T, token string) {
	t.Helper()
	rec := c.do(http.MethodGet, "/ui/login", nil)
	m := csrfRE.FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("login page: %s", rec.Body.String())
	}
	if rec := c.do(http.MethodPost, "/ui/login", url.Values{"_csrf": {m[1]}, "token": {token}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", rec.Code, rec.Body.String())
	}
}

// TestUI_TenantSession: an admin token scoped to a tenant signs in to a console that
// shows that tenant only, and refuses the pages of what every tenant shares.
func TestUI_TenantSession(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	c := &client{tb: tb}
	c.signIn(t, tb.acme)
	if loc := c.last.Header().Get("Location"); loc != "/ui/endpoints" {
		t.Errorf("a tenant's sign-in leads to %q, want its endpoints", loc)
	}
	for path, want := range map[string]int{"/ui/": 403, "/ui/outbox": 403, "/ui/streams": 403, "/ui/endpoints": 200,
		"/ui/endpoints/" + tb.eps["acme"]: 200, "/ui/endpoints/" + tb.eps["globex"]: 404, "/ui/deliveries": 200} {
		if rec := c.do(http.MethodGet, path, nil); rec.Code != want {
			t.Errorf("tenant GET %s: %d, want %d", path, rec.Code, want)
		}
	}
	list := c.do(http.MethodGet, "/ui/endpoints", nil).Body.String()
	if !strings.Contains(list, tb.eps["acme"]) || strings.Contains(list, tb.eps["globex"]) {
		t.Fatal("the tenant's endpoint list shows another tenant's endpoint, or not its own")
	}
	// Creating an endpoint for another tenant is refused beside the field (there is
	// none in its form; a crafted post gets the error).
	csrf := csrfRE.FindStringSubmatch(list)[1]
	rec := c.do(http.MethodPost, "/ui/endpoints", url.Values{"_csrf": {csrf}, "url": {"http://127.0.0.1:9/x"}, "tenant": {"globex"}})
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "may act for tenant") {
		t.Fatalf("tenant creates for globex: %d", rec.Code)
	}

	op := &client{tb: tb}
	op.signIn(t, tb.operator)
	if rec := op.do(http.MethodGet, "/ui/", nil); rec.Code != http.StatusOK {
		t.Fatalf("operator overview: %d", rec.Code)
	}
	if all := op.do(http.MethodGet, "/ui/endpoints", nil).Body.String(); !strings.Contains(all, tb.eps["globex"]) {
		t.Fatal("the operator does not see every tenant")
	}
	// Signing out ends the session.
	csrf = csrfRE.FindStringSubmatch(op.do(http.MethodGet, "/ui/endpoints", nil).Body.String())[1]
	if rec := op.do(http.MethodPost, "/ui/logout", url.Values{"_csrf": {csrf}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("logout: %d", rec.Code)
	}
	if rec := op.do(http.MethodGet, "/ui/endpoints", nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("after sign-out: %d, want a redirect to sign in", rec.Code)
	}
}

// TestUI_SecurityHeaders pins the headers of the console and the portal.
func TestUI_SecurityHeaders(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	c := &client{tb: tb}
	for path, frame := range map[string]string{"/ui/login": "frame-ancestors 'none'", "/ui/portal?link=ehl_x": "frame-ancestors https://app.example.com"} {
		rec := c.do(http.MethodGet, path, nil)
		h := rec.Header()
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "form-action 'self'", frame} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
	rec := c.do(http.MethodGet, "/ui/login", nil)
	var session *http.Cookie
	c.signIn(t, tb.operator)
	for _, ck := range c.cookies {
		if ck.Name == sessionCookie && ck.Value != "" {
			session = ck
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/ui" {
		t.Fatalf("session cookie %+v", session)
	}
	_ = rec
	// A link that does not verify is 401 on the portal, with no data.
	if rec := c.do(http.MethodGet, "/ui/portal?link=ehl_nope", nil); rec.Code != http.StatusUnauthorized {
		t.Fatalf("bad link: %d", rec.Code)
	}
}

// FuzzUI_SafeNext: a sign-in's redirect target stays on the console.
func FuzzUI_SafeNext(f *testing.F) {
	for _, s := range []string{"/ui/deliveries?state=dead", "//evil.example/", "https://evil.example/", "/ui/../x", "/ui/\\evil", "/ui/portal?link=x", "", "/uix"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := safeNext(s)
		u, err := url.Parse(got)
		if !strings.HasPrefix(got, "/ui/") || strings.HasPrefix(got, "//") || err != nil || u.Host != "" || u.Scheme != "" ||
			strings.HasPrefix(got, PortalPrefix) || strings.ContainsAny(got, "\\\r\n") {
			t.Fatalf("safeNext(%q) = %q", s, got)
		}
	})
}

// FuzzUI_ThemeQuery: only the portal's colour variables, with values of the accepted
// shapes, reach its stylesheet.
func FuzzUI_ThemeQuery(f *testing.F) {
	for _, s := range []string{"accent=%23abc", "accent=red;}body{x", "background=%23112233&font=x", "accent=%23abc%0a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		out, _ := url.ParseQuery(themeQuery(q))
		for k, vs := range out {
			re, ok := config.ThemeVars[k]
			if !ok || k == "font" || k == "radius" || len(vs) != 1 || !re.MatchString(vs[0]) {
				t.Fatalf("themeQuery(%q) kept %s=%v", raw, k, vs)
			}
		}
	})
}

// TestUI_ReadOnlySession: a read-only token sees everything, is offered no form that
// changes anything, is refused such posts, and may still use the schema validator.
func TestUI_ReadOnlySession(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	c := &client{tb: tb}
	c.signIn(t, tb.reader)
	page := c.do(http.MethodGet, "/ui/endpoints", nil).Body.String()
	if strings.Contains(page, "Register an endpoint") {
		t.Fatal("a read-only session is offered the registration form")
	}
	csrf := csrfRE.FindStringSubmatch(page)[1] // the sign-out form's
	if rec := c.do(http.MethodPost, "/ui/endpoints", url.Values{"_csrf": {csrf}, "url": {"http://127.0.0.1:9/x"}}); rec.Code != http.StatusForbidden {
		t.Fatalf("read-only create: %d", rec.Code)
	}
	rec := c.do(http.MethodPost, "/ui/schemas/identity.user.erased/validate", url.Values{"_csrf": {csrf}, "json": {`{"user_id":1}`}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Invalid") {
		t.Fatalf("read-only validation: %d", rec.Code)
	}
}

// TestUI_SessionsSharedByReplicas: two consoles on one session table (two replicas on
// one ledger, behind a load balancer without sticky sessions): a sign-in on one is a
// session on the other, with its CSRF token; signing out on the second ends it on the
// first; a store that cannot be read answers 503 instead of asking to sign in again.
func TestUI_SessionsSharedByReplicas(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, backend ledger.Backend) {
		first := setup(t)
		st, err := auth.NewSessionStore(first.ctx, ledgertest.Open(t, backend, ledger.Config{}).DB())
		if err != nil {
			t.Fatal(err)
		}
		replica := func(st *auth.SessionStore) *testBundle {
			tb := *first
			tb.c, err = New(Config{Admin: first.srv, Logger: slog.New(slog.DiscardHandler), Schemas: schema.Builtin(), Sessions: st})
			if err != nil {
				t.Fatal(err)
			}
			return &tb
		}
		a, b := replica(st), replica(st)
		ca := &client{tb: a}
		ca.signIn(t, a.operator)
		cb := &client{tb: b, cookies: ca.cookies}
		page := cb.do(http.MethodGet, "/ui/endpoints", nil)
		if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), first.eps["globex"]) {
			t.Fatalf("the other replica's endpoints page: %d", page.Code)
		}
		csrf := csrfRE.FindStringSubmatch(page.Body.String())[1]
		if rec := cb.do(http.MethodPost, "/ui/logout", url.Values{"_csrf": {csrf}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("sign out on the other replica: %d %s", rec.Code, rec.Body.String())
		}
		if rec := ca.do(http.MethodGet, "/ui/endpoints", nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("the first replica after sign-out elsewhere: %d, want a redirect to sign in", rec.Code)
		}

		ca.signIn(t, a.acme)
		if rec := ca.do(http.MethodGet, "/ui/endpoints/"+first.eps["globex"], nil); rec.Code != http.StatusNotFound {
			t.Fatalf("a tenant session read back from the store sees another tenant: %d", rec.Code)
		}
		if _, err := st.Prune(first.ctx, time.Now().Add(48*time.Hour)); err != nil { // every session expired
			t.Fatal(err)
		}
		if rec := cb.do(http.MethodGet, "/ui/endpoints", nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("a pruned session: %d", rec.Code)
		}

		gone := ledgertest.Open(t, backend, ledger.Config{}).DB()
		down, err := auth.NewSessionStore(first.ctx, gone)
		if err != nil {
			t.Fatal(err)
		}
		_ = gone.Close()
		cd := &client{tb: replica(down), cookies: ca.cookies}
		if rec := cd.do(http.MethodGet, "/ui/endpoints", nil); rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("a session store that cannot be read: %d, want 503", rec.Code)
		}
	})
}

// TestUI_SessionExpiresOnItsClock: a console session opens until its TTL has passed on
// the console's clock and not after, in memory and in the shared store, and a sign-in
// prunes the store's expired sessions by that clock too.
func TestUI_SessionExpiresOnItsClock(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, db *sql.DB) {
		ctx := testenv.Context(t, 30*time.Second)
		var store *auth.SessionStore
		if db != nil {
			var err error
			if store, err = auth.NewSessionStore(ctx, db); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Now()
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		s := newSessionsAt(time.Hour, store, clock)
		signIn := func() *http.Cookie {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/ui/login", nil).WithContext(ctx)
			if _, err := s.create(rec, req, auth.Principal{Kind: auth.KindLoopback, ID: "loopback", Scopes: auth.AllScopes}); err != nil {
				t.Fatal(err)
			}
			return rec.Result().Cookies()[0]
		}
		opens := func(ck *http.Cookie) bool {
			req := httptest.NewRequest(http.MethodGet, "/ui/", nil).WithContext(ctx)
			req.AddCookie(ck)
			_, ok, err := s.get(req)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		first := signIn()
		advance(59 * time.Minute)
		if !opens(first) {
			t.Fatal("a session within its TTL does not open")
		}
		advance(time.Minute)
		if opens(first) {
			t.Fatal("a session at its TTL still opens")
		}
		if db == nil {
			return
		}
		second := signIn() // prunes the first by the console's clock
		var rows int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM auth_sessions`).Scan(&rows); err != nil || rows != 1 {
			t.Fatalf("%d sessions kept after a sign-in past the first's expiry (%v), want 1", rows, err)
		}
		if !opens(second) {
			t.Fatal("the new session does not open")
		}
	}
	t.Run("memory", func(t *testing.T) { run(t, nil) })
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) { run(t, ledgertest.Open(t, b, ledger.Config{}).DB()) })
}

// TestUI_CountNouns: figures read as English (1 time, 2 times, never opened).
func TestUI_CountNouns(t *testing.T) {
	t.Parallel()
	count := funcs["count"].(func(any, string, string) string)
	for n, want := range map[any]string{0: "0 times", 1: "1 time", int64(2): "2 times"} {
		if got := count(n, "time", "times"); got != want {
			t.Errorf("count(%v) = %q, want %q", n, got, want)
		}
	}
}
