package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser tests drive Debian's Chromium, headless, through chromedp (the DevTools
// protocol from Go, so they stay plain `go test`). Chromium is started with a fresh
// profile and without any of its own network traffic: the machine has no outside
// network, and the tests talk to loopback servers only. A missing Chromium fails the
// test under CI=true (.ci/run installs it) and skips it elsewhere, loudly.

// chromium finds the browser: $HUB_TEST_CHROMIUM, else chromium on the PATH.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HUB_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (apt-get install chromium); the browser tests need it under CI")
	}
	t.Skip("SKIPPING browser test: chromium is not installed (apt-get install chromium)")
	return ""
}

// browser starts a headless Chromium for the test and returns its tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, cancelC := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

type step = chromedp.Action[chromedp.Void]

// do runs browser steps, failing the test with the page's text on error.
func do(t *testing.T, ctx context.Context, what string, steps ...step) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, pageText(ctx))
	}
}

// get runs one browser action and returns its value.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, pageText(ctx))
	}
	return v
}

// text is the text of the first element sel matches.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return get(t, ctx, "text of "+sel, chromedp.Text(chromedp.CSS(sel)))
}

// pageText is the current URL and the start of the body's text, for failures.
func pageText(ctx context.Context) string {
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	url, _ := chromedp.Run(sctx, chromedp.Location())
	body, _ := chromedp.Run(sctx, chromedp.Text(chromedp.CSS("body")))
	if len(body) > 2000 {
		body = body[:2000]
	}
	return "at " + url + ":\n" + body
}

// acceptConfirms makes the page's confirm() dialogs answer yes (the console asks
// before purges and bulk actions).
var acceptConfirms = chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
	_, err := chromedp.Evaluate[bool]("window.confirm = function () { return true; }; true")(ctx, tg)
	return err
})

// checkA11y fails the test for a control of the current page without an accessible
// name (a label, aria-label or aria-labelledby; a button's text), for an image without
// one, and for a page without its landmarks and skip link. It also records the page's
// Content-Security-Policy violations, which would mean an inline script or style.
func checkA11y(t *testing.T, ctx context.Context) {
	t.Helper()
	problems := get(t, ctx, "accessibility check", chromedp.Evaluate[[]string](`(function () {
  var out = [];
  document.querySelectorAll("input, select, textarea, button").forEach(function (el) {
    if (el.type === "hidden") { return; }
    var named = (el.labels && el.labels.length > 0) || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby") ||
      (el.tagName === "BUTTON" && el.textContent.trim() !== "");
    if (!named) { out.push("unnamed " + el.tagName.toLowerCase() + " " + (el.name || el.id || el.outerHTML.slice(0, 80))); }
  });
  document.querySelectorAll("svg[role=img]").forEach(function (el) {
    if (!el.getAttribute("aria-labelledby") || !el.querySelector("title")) { out.push("unnamed chart"); }
  });
  if (!document.querySelector("main#main")) { out.push("no main landmark"); }
  if (!document.querySelector("a.skip[href='#main']")) { out.push("no skip link"); }
  if (!document.documentElement.lang) { out.push("no lang"); }
  (window.hubCSPViolations || []).forEach(function (v) { out.push("CSP violation: " + v); });
  return out;
})()`))
	if len(problems) > 0 {
		url := get(t, ctx, "location", chromedp.Location())
		t.Errorf("%s: %s", url, strings.Join(problems, "; "))
	}
}

// waitText reloads the page until sel's text contains want (live pages refresh by
// themselves; a reload makes the wait independent of the refresh interval).
func waitText(t *testing.T, ctx context.Context, url, sel, want string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	var got string
	for {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body")))
		if err == nil {
			got, err = chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
		}
		cancel()
		if err == nil && strings.Contains(got, want) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q never showed %q within %s (last: %q, err %v)", url, sel, want, within, got, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// screenshot takes a full-page PNG on every run and, with EVENTHUB_SCREENSHOTS=1
// (`make screenshots`), writes it to docs/screenshots/<name>.png, which the README and
// docs/console.md show; other runs write it to the test's temporary directory, so a
// test run leaves the checkout as it was.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png := get(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	dir := t.TempDir()
	if os.Getenv("EVENTHUB_SCREENSHOTS") == "1" {
		dir = filepath.Join("..", "..", "docs", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// formClient is an HTTP client with cookies, for the checks a browser cannot make
// (posting to a page another tenant's link may not see, with a valid CSRF token).
func formClient(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfRE = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// csrfOf returns the CSRF token of a page's forms.
func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%.1500s", body)
	}
	return m[1]
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }
