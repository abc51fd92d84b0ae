package auth

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/koder/eventhub/hub"
)

// GuardConfig configures the request guards of one listener.
type GuardConfig struct {
	// ListenAddr is the listener's address ("127.0.0.1:8081", ":8080"); its host, when
	// it is a name or a specific address, is one of the listener's own names.
	ListenAddr string
	// Hosts are further names the Host header may carry: the listener's public DNS
	// names and addresses. "*.example.com" allows every subdomain of example.com.
	// Loopback names and addresses, and the address a connection arrived at, are always
	// allowed.
	Hosts []string
	// Origins are other origins ("https://console.example.com") whose browsers may call
	// the listener. The listener's own origin is always allowed.
	Origins []string
	// ContentTypes are the media types a write (POST, PUT, PATCH, DELETE) with a body
	// may carry. Default application/json.
	ContentTypes []string
	// AllowNavigation lets cross-site top-level GET navigations through (a link to the
	// tenant portal clicked in a webmail). API listeners leave it false.
	AllowNavigation bool
}

// Guard holds the request checks every listener runs before authentication: the Host
// allow-list (DNS rebinding), cross-site refusal (CSRF from a browser on the same
// machine) and the write media type. Refusals are problem documents: 403 naming the
// header at fault, 415 for a media type.
type Guard struct {
	cfg       GuardConfig
	listen    string // host of ListenAddr, normalised; "" when unspecified
	exact     map[string]bool
	suffixes  []string
	origins   map[string]bool
	mediaType []string
}

// NewGuard validates cfg and returns the guard.
func NewGuard(cfg GuardConfig) (*Guard, error) {
	g := &Guard{cfg: cfg, exact: map[string]bool{}, origins: map[string]bool{}, mediaType: cfg.ContentTypes}
	if len(g.mediaType) == 0 {
		g.mediaType = []string{"application/json"}
	}
	if cfg.ListenAddr != "" {
		h, _, err := net.SplitHostPort(cfg.ListenAddr)
		if err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "auth: GuardConfig.ListenAddr %q: %v", cfg.ListenAddr, err)
		}
		if ip := net.ParseIP(h); h != "" && (ip == nil || !ip.IsUnspecified()) {
			g.listen = normHost(h)
		}
	}
	for _, h := range cfg.Hosts {
		n := normHost(h)
		switch {
		case n == "" || strings.ContainsAny(n, "/:@ ") && net.ParseIP(n) == nil:
			return nil, hub.Errorf(hub.InvalidArgument, "auth: GuardConfig.Hosts: %q is not a host name or address", h)
		case strings.HasPrefix(n, "*."):
			g.suffixes = append(g.suffixes, n[1:])
		default:
			g.exact[n] = true
		}
	}
	for _, o := range cfg.Origins {
		n, ok := normOrigin(o)
		if !ok {
			return nil, hub.Errorf(hub.InvalidArgument, "auth: GuardConfig.Origins: %q is not an origin (scheme://host[:port])", o)
		}
		g.origins[n] = true
	}
	for _, mt := range g.mediaType {
		if _, _, err := mime.ParseMediaType(mt); err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "auth: GuardConfig.ContentTypes: %q: %v", mt, err)
		}
	}
	return g, nil
}

// Middleware runs Check before next.
func (g *Guard) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.Check(r); err != nil {
			WriteError(w, "", err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Check runs the three checks in order: Host, site, media type.
func (g *Guard) Check(r *http.Request) error {
	if err := g.CheckHost(r); err != nil {
		return err
	}
	if err := g.CheckSite(r); err != nil {
		return err
	}
	return g.CheckContentType(r)
}

// CheckHost refuses a Host header that is not one of the listener's names. A DNS
// rebinding attack points the attacker's name at 127.0.0.1: the browser then talks to
// the hub but still sends the attacker's name as Host, which this check refuses.
func (g *Guard) CheckHost(r *http.Request) error {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = normHost(host)
	if host != "" && g.allowedHost(host, r) {
		return nil
	}
	return &DeniedError{Field: "Host", Anchor: "host-allow-list",
		Msg: "auth: Host " + quote(limit(r.Host, 100)) + " is not a name of this listener (DNS rebinding?)"}
}

func (g *Guard) allowedHost(host string, r *http.Request) bool {
	if loopbackHost(host) || host == g.listen || g.exact[host] {
		return true
	}
	for _, s := range g.suffixes {
		if strings.HasSuffix(host, s) && len(host) > len(s) {
			return true
		}
	}
	// An address literal equal to the connection's local address is the listener's
	// own address (a wildcard bind reached by one of the machine's IPs). Rebinding
	// cannot produce it: it needs a name.
	if ip := net.ParseIP(host); ip != nil {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if ta, ok := la.(*net.TCPAddr); ok && ta.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}

// CheckSite refuses requests a browser sends on behalf of another site: Sec-Fetch-Site
// "cross-site" or "same-site" (another port of localhost is same-site), an Origin that
// is neither the listener's own nor configured, and "Origin: null" (sandboxed frames,
// file: pages, privacy-stripped redirects). Requests without either header come from
// non-browser clients (curl, SDKs), which CSRF cannot drive, and pass.
func (g *Guard) CheckSite(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin != "" {
		if origin == "null" {
			return &DeniedError{Field: "Origin", Anchor: "cross-site", Msg: "auth: Origin null refused (a sandboxed or privacy-stripped cross-site request)"}
		}
		n, ok := normOrigin(origin)
		if !ok {
			return &DeniedError{Field: "Origin", Anchor: "cross-site", Msg: "auth: malformed Origin"}
		}
		if g.origins[n] {
			return nil // a configured origin: trusted whatever Sec-Fetch-Site says
		}
		if n != g.ownOrigin(r) {
			return &DeniedError{Field: "Origin", Anchor: "cross-site", Msg: "auth: cross-origin request from " + quote(limit(origin, 100)) + " refused"}
		}
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
		return nil
	case "cross-site", "same-site":
		if g.cfg.AllowNavigation && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
			r.Header.Get("Sec-Fetch-Mode") == "navigate" {
			return nil
		}
		return &DeniedError{Field: "Sec-Fetch-Site", Anchor: "cross-site", Msg: "auth: " + site + " request refused"}
	default:
		return &DeniedError{Field: "Sec-Fetch-Site", Anchor: "cross-site", Msg: "auth: unknown Sec-Fetch-Site value"}
	}
}

// ownOrigin is the origin of the listener as this request addressed it.
func (g *Guard) ownOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	n, _ := normOrigin(scheme + "://" + r.Host)
	return n
}

// CheckContentType refuses a write with a body whose media type is not one of
// ContentTypes: HTML forms can post text/plain, urlencoded and multipart bodies across
// sites without a CORS preflight, but not JSON. A body-less write (curl -X POST) needs
// no Content-Type; a browser cannot send one across sites without an Origin, which
// CheckSite judges.
func (g *Guard) CheckContentType(r *http.Request) error {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 && len(r.TransferEncoding) == 0 {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && slices.Contains(g.mediaType, mt) {
		return nil
	}
	return &MediaTypeError{Got: limit(ct, 100), Want: g.mediaType}
}

// MediaTypeError: a write's body has a media type the listener does not take. 415.
type MediaTypeError struct {
	Got  string
	Want []string
}

func (e *MediaTypeError) Error() string {
	got := e.Got
	if got == "" {
		got = "no Content-Type"
	}
	return "auth: unsupported media type " + quote(got) + " (want " + strings.Join(e.Want, " or ") + ")"
}
func (e *MediaTypeError) HubCode() int          { return int(hub.InvalidArgument) }
func (e *MediaTypeError) ProblemStatus() int    { return http.StatusUnsupportedMediaType }
func (e *MediaTypeError) ProblemField() string  { return "Content-Type" }
func (e *MediaTypeError) ProblemAnchor() string { return "content-type" }

// normHost lowercases a host and drops a trailing dot and IPv6 brackets.
func normHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return h
}

// normOrigin returns scheme://host[:port] lowercased, without the scheme's default
// port; false when s is not an origin.
func normOrigin(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	host, port := u.Hostname(), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	host = normHost(host)
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host, true
}
