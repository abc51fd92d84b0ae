package auth

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/koder/eventhub/hub"
)

// TestSEC_AdminGuard is the table of cross-site and DNS rebinding requests against the
// guard the admin API runs first.
func TestSEC_AdminGuard(t *testing.T) {
	t.Parallel()
	g, err := NewGuard(GuardConfig{ListenAddr: "127.0.0.1:8081", Hosts: []string{"hub.example.com", "*.hub.internal", "10.9.9.9"},
		Origins: []string{"https://console.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := g.Middleware(ok)
	type hdr = map[string]string
	for _, tc := range []struct {
		name    string
		method  string
		host    string
		headers hdr
		body    string
		local   string // the connection's local address
		status  int
		field   string
	}{
		// Host allow-list: DNS rebinding points evil.example at 127.0.0.1; the browser
		// still sends its name.
		{"RebindingHost", "GET", "evil.example:8081", nil, "", "", 403, "Host"},
		{"RebindingHostWrite", "POST", "attacker.test", hdr{"Content-Type": "application/json"}, "{}", "", 403, "Host"},
		{"EmptyHost", "GET", "", nil, "", "", 403, "Host"},
		{"Localhost", "GET", "localhost:8081", nil, "", "", 204, ""},
		{"LocalhostTrailingDot", "GET", "LOCALHOST.:8081", nil, "", "", 204, ""},
		{"SubdomainOfLocalhost", "GET", "app.localhost:8081", nil, "", "", 204, ""},
		{"IPv4Loopback", "GET", "127.0.0.1:8081", nil, "", "", 204, ""},
		{"OtherLoopbackAddress", "GET", "127.0.0.2", nil, "", "", 204, ""},
		{"IPv6Loopback", "GET", "[::1]:8081", nil, "", "", 204, ""},
		{"ConfiguredName", "GET", "hub.example.com", nil, "", "", 204, ""},
		{"ConfiguredWildcard", "GET", "a.b.hub.internal:443", nil, "", "", 204, ""},
		{"WildcardIsNotTheApex", "GET", "hub.internal", nil, "", "", 403, "Host"},
		{"SuffixTrick", "GET", "evilhub.internal", nil, "", "", 403, "Host"},
		{"ConfiguredAddress", "GET", "10.9.9.9:8081", nil, "", "", 204, ""},
		{"ConnectionLocalAddress", "GET", "192.168.7.7:8081", nil, "", "192.168.7.7:8081", 204, ""},
		{"OtherAddress", "GET", "192.168.7.8:8081", nil, "", "192.168.7.7:8081", 403, "Host"},
		// Cross-site refusal.
		{"CrossSiteFetch", "GET", "localhost:8081", hdr{"Sec-Fetch-Site": "cross-site"}, "", "", 403, "Sec-Fetch-Site"},
		{"SameSiteOtherPort", "POST", "localhost:8081", hdr{"Sec-Fetch-Site": "same-site"}, "", "", 403, "Sec-Fetch-Site"},
		{"SameOrigin", "POST", "localhost:8081", hdr{"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost:8081"}, "", "", 204, ""},
		{"UserTyped", "GET", "localhost:8081", hdr{"Sec-Fetch-Site": "none"}, "", "", 204, ""},
		{"UnknownSecFetchSite", "GET", "localhost:8081", hdr{"Sec-Fetch-Site": "weird"}, "", "", 403, "Sec-Fetch-Site"},
		{"ForeignOrigin", "POST", "localhost:8081", hdr{"Origin": "https://evil.example"}, "", "", 403, "Origin"},
		{"OtherPortOrigin", "POST", "localhost:8081", hdr{"Origin": "http://localhost:3000"}, "", "", 403, "Origin"},
		{"OriginNull", "POST", "localhost:8081", hdr{"Origin": "null"}, "", "", 403, "Origin"},
		{"MalformedOrigin", "POST", "localhost:8081", hdr{"Origin": "javascript:alert(1)"}, "", "", 403, "Origin"},
		{"ConfiguredOrigin", "POST", "hub.example.com", hdr{"Origin": "https://console.example.com", "Sec-Fetch-Site": "cross-site"}, "", "", 204, ""},
		{"OwnOriginDefaultPort", "POST", "hub.example.com:80", hdr{"Origin": "http://hub.example.com"}, "", "", 204, ""},
		{"CurlNoBrowserHeaders", "POST", "127.0.0.1:8081", nil, "", "", 204, ""},
		// Media type of writes.
		{"FormPost", "POST", "localhost:8081", hdr{"Content-Type": "application/x-www-form-urlencoded"}, "a=b", "", 415, "Content-Type"},
		{"TextPlainPost", "POST", "localhost:8081", hdr{"Content-Type": "text/plain"}, "{}", "", 415, "Content-Type"},
		{"MultipartPut", "PUT", "localhost:8081", hdr{"Content-Type": "multipart/form-data; boundary=x"}, "--x--", "", 415, "Content-Type"},
		{"BodyWithoutType", "PATCH", "localhost:8081", nil, "{}", "", 415, "Content-Type"},
		{"JSON", "POST", "localhost:8081", hdr{"Content-Type": "application/json"}, "{}", "", 204, ""},
		{"JSONWithCharset", "POST", "localhost:8081", hdr{"Content-Type": "Application/JSON; charset=utf-8"}, "{}", "", 204, ""},
		{"BodylessWrite", "DELETE", "localhost:8081", nil, "", "", 204, ""},
		{"ReadsNeedNoType", "GET", "localhost:8081", hdr{"Content-Type": "text/plain"}, "", "", 204, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var body *strings.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			var r *http.Request
			if body != nil {
				r = httptest.NewRequest(tc.method, "/endpoints", body)
			} else {
				r = httptest.NewRequest(tc.method, "/endpoints", nil)
			}
			r.Host = tc.host
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			if tc.local != "" {
				la, _ := net.ResolveTCPAddr("tcp", tc.local)
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, la))
			}
			got := serve(h, r)
			if got.status != tc.status {
				t.Fatalf("status %d (%+v), want %d", got.status, got.prob, tc.status)
			}
			if tc.status != 204 {
				if got.prob.Status != tc.status || got.prob.Field != tc.field || got.prob.Detail == "" {
					t.Fatalf("problem %+v, want status %d field %q", got.prob, tc.status, tc.field)
				}
				if got.hdr.Get("X-Content-Type-Options") != "nosniff" {
					t.Fatal("problem without nosniff")
				}
			}
		})
	}
}

func TestSEC_GuardOptions(t *testing.T) {
	t.Parallel()

	t.Run("ListenAddrNameIsOwn", func(t *testing.T) {
		g := must[*Guard](t)(NewGuard(GuardConfig{ListenAddr: "hub.lan:8080"}))
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = "hub.lan:8080"
		if err := g.Check(r); err != nil {
			t.Fatal(err)
		}
		wild := must[*Guard](t)(NewGuard(GuardConfig{ListenAddr: ":8080"}))
		r.Host = "0.0.0.0"
		if err := wild.Check(r); hub.Code(err) != hub.PermissionDenied {
			t.Fatalf("unspecified address as Host: %v", err)
		}
	})

	t.Run("IngressMediaTypes", func(t *testing.T) {
		g := must[*Guard](t)(NewGuard(GuardConfig{ContentTypes: []string{"application/cloudevents+json", "application/cloudevents-batch+json", "application/json"}}))
		r := httptest.NewRequest("POST", "/", strings.NewReader("[]"))
		r.Host = "localhost"
		r.Header.Set("Content-Type", "application/cloudevents-batch+json")
		if err := g.Check(r); err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", "text/plain")
		err := g.Check(r)
		if hub.Code(err) != hub.InvalidArgument || !strings.Contains(err.Error(), "cloudevents") {
			t.Fatalf("%v", err)
		}
	})

	t.Run("NavigationForThePortal", func(t *testing.T) {
		g := must[*Guard](t)(NewGuard(GuardConfig{AllowNavigation: true}))
		r := httptest.NewRequest("GET", "/portal", nil)
		r.Host = "localhost"
		r.Header.Set("Sec-Fetch-Site", "cross-site")
		r.Header.Set("Sec-Fetch-Mode", "navigate")
		if err := g.Check(r); err != nil {
			t.Fatalf("a clicked link: %v", err)
		}
		r.Header.Set("Sec-Fetch-Mode", "no-cors")
		if err := g.Check(r); hub.Code(err) != hub.PermissionDenied {
			t.Fatalf("a cross-site subresource: %v", err)
		}
		p := httptest.NewRequest("POST", "/portal", nil)
		p.Host = "localhost"
		p.Header.Set("Sec-Fetch-Site", "cross-site")
		p.Header.Set("Sec-Fetch-Mode", "navigate")
		if err := g.Check(p); hub.Code(err) != hub.PermissionDenied {
			t.Fatalf("a cross-site form post: %v", err)
		}
	})

	t.Run("TLSOrigin", func(t *testing.T) {
		g := must[*Guard](t)(NewGuard(GuardConfig{}))
		r := httptest.NewRequest("POST", "/", nil)
		r.Host = "localhost:8443"
		r.TLS = &tls.ConnectionState{}
		r.Header.Set("Origin", "https://localhost:8443")
		if err := g.Check(r); err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Origin", "http://localhost:8443")
		if err := g.Check(r); hub.Code(err) != hub.PermissionDenied {
			t.Fatalf("scheme downgrade: %v", err)
		}
	})

	t.Run("BadConfig", func(t *testing.T) {
		for name, cfg := range map[string]GuardConfig{
			"ListenAddr":  {ListenAddr: "no-port"},
			"HostWithURL": {Hosts: []string{"https://x"}},
			"EmptyHost":   {Hosts: []string{""}},
			"Origin":      {Origins: []string{"console.example.com"}},
			"OriginPath":  {Origins: []string{"https://x/path"}},
			"MediaType":   {ContentTypes: []string{"not a type"}},
		} {
			if _, err := NewGuard(cfg); hub.Code(err) != hub.InvalidArgument {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}
