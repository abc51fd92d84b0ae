package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/hub"
)

// The console's access layer. Every request passes, in order: the security headers, the
// concurrency bound shared with the API, the request guard (Host allow-list, cross-site
// refusal for everything but top-level GET navigations, HTML form media types), then
// one of:
//
//   - the operator console: a session cookie made at sign-in with an admin token
//     (HttpOnly, SameSite=Strict, Secure under TLS, Path=/ui). No session: GETs go to
//     the sign-in page, writes are 401.
//   - the tenant portal: a link token (?link=ehl_...) verified on every request, so an
//     expired link stops working at once. No cookie, because a portal embedded in
//     another site's iframe cannot rely on one (SameSite cookies are not sent in a
//     cross-site frame, and third-party cookies are blocked by browsers).
//
// Writes (POST) then need the write scope and a CSRF token in the form (_csrf): the
// session's random token for operators, an HMAC of the link's id for the portal. The
// guard's Origin check already refuses cross-site posts; the token is the second lock
// that does not depend on the browser sending Origin.

// Cookie and form names.
const (
	sessionCookie = "hub_session"
	loginCookie   = "hub_login" // the pre-session CSRF token of the sign-in form
	csrfField     = "_csrf"
	linkParam     = "link"
)

// securityHeaders sets the headers of every console response: a strict CSP (scripts
// and styles from this origin only, no inline code, no plugins, forms post here only),
// framing refused for the console and limited to the configured ancestors for the
// portal, no referrer to other sites (portal URLs carry the link; "no-referrer" would
// also make browsers send "Origin: null" on our own form posts, which the guard
// refuses), no MIME sniffing.
func securityHeaders(w http.ResponseWriter, portal bool, ancestors []string) {
	fa := "'none'"
	if portal && len(ancestors) > 0 {
		fa = strings.Join(ancestors, " ")
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors "+fa)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	if !portal || len(ancestors) == 0 {
		h.Set("X-Frame-Options", "DENY")
	}
	if !portal {
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
	}
	h.Set("Cache-Control", "no-store")
}

type ctxKey int

const (
	keyCSRF ctxKey = iota
	keyLink
)

// withSession resolves the operator's session into the request's principal.
func (c *Console) withSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok, err := c.sessions.get(r)
		if err != nil {
			c.fail(w, r, nil, err)
			return
		}
		if !ok {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, Prefix+"/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			c.fail(w, r, nil, hub.Errorf(hub.Unauthenticated, "sign in first"))
			return
		}
		ctx := auth.NewContext(r.Context(), s.Principal)
		ctx = context.WithValue(ctx, keyCSRF, s.CSRF)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// withLink resolves the portal's link token into the request's (tenant) principal.
func (c *Console) withLink(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, PortalPrefix+"/theme.css") {
			next.ServeHTTP(w, r)
			return
		}
		tok := r.URL.Query().Get(linkParam)
		if c.cfg.Admin.Links == nil || tok == "" || !auth.LooksLikeLink(tok) {
			c.fail(w, r, nil, hub.Errorf(hub.Unauthenticated, "this page needs a portal link (ask the operator for a new one)"))
			return
		}
		p, err := c.cfg.Admin.Links.Verify(r.Context(), tok)
		if err != nil {
			c.fail(w, r, nil, err)
			return
		}
		ctx := auth.NewContext(r.Context(), p)
		ctx = context.WithValue(ctx, keyLink, tok)
		ctx = context.WithValue(ctx, keyCSRF, c.linkCSRF(p.ID))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// linkCSRF is the portal's CSRF token for a link: an HMAC of its id, so replicas
// sharing the key accept each other's forms and no state is kept.
func (c *Console) linkCSRF(jti string) string {
	m := hmac.New(sha256.New, c.csrfKey)
	m.Write([]byte("portal-csrf:" + jti))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkWrite is the gate of every POST handler: the write scope (read for a POST that
// only reads) and the CSRF token.
func checkWrite(r *http.Request, reads bool) error {
	p, _ := auth.FromContext(r.Context())
	need := auth.ScopeWrite
	if reads {
		need = auth.ScopeRead
	}
	if err := p.Require(need); err != nil {
		return err
	}
	want, _ := r.Context().Value(keyCSRF).(string)
	if !sameToken(r.PostFormValue(csrfField), want) {
		return &auth.DeniedError{Field: csrfField, Anchor: "the-web-console", Msg: "ui: missing or wrong CSRF token (reload the page and try again)"}
	}
	return nil
}

func sameToken(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// login shows the sign-in form and signs in: with an admin token, or, when the hub has
// no admin token, as the loopback operator (the admin API's own rule: no token, loopback
// clients are operators).
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.FormValue("next"))
	noTokens := c.cfg.Admin.Tokens.Len() == 0
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		tok := randomToken()
		http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: Prefix + "/login", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 3600})
		c.render(w, r, http.StatusOK, "login", &page{Title: "Sign in", csrf: tok, Data: loginData{Next: next, NoTokens: noTokens}})
	case http.MethodPost:
		ck, err := r.Cookie(loginCookie)
		if err != nil || !sameToken(r.PostFormValue(csrfField), ck.Value) {
			c.fail(w, r, nil, &auth.DeniedError{Field: csrfField, Anchor: "the-web-console", Msg: "ui: the sign-in form expired; reload it"})
			return
		}
		var p auth.Principal
		if noTokens {
			if !loopback(r) {
				err = &auth.DeniedError{Anchor: "admin-tokens", Msg: "the hub has no admin token and answers loopback clients only"}
			}
			p = auth.Principal{Kind: auth.KindLoopback, ID: "loopback", Scopes: auth.AllScopes}
		} else {
			p, err = c.cfg.Admin.Tokens.Verify(r.Context(), strings.TrimSpace(r.PostFormValue("token")))
		}
		if err == nil {
			err = p.Require(auth.ScopeRead)
		}
		c.cfg.Admin.AuditAction(r.WithContext(auth.NewContext(r.Context(), p)), "console.signin", "", p.Tenant, err)
		if err != nil {
			c.render(w, r, http.StatusUnauthorized, "login", &page{Title: "Sign in", csrf: ck.Value,
				Error: "That token is not accepted.", Data: loginData{Next: next, NoTokens: noTokens}})
			return
		}
		if !p.Operator() && next == Prefix+"/" {
			next = Prefix + "/endpoints" // the overview is for operators
		}
		if _, err := c.sessions.create(w, r, p); err != nil {
			c.fail(w, r, nil, err)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: Prefix + "/login", MaxAge: -1})
		http.Redirect(w, r, next, http.StatusSeeOther)
	default:
		w.Header().Set("Allow", "GET, POST")
		c.fail(w, r, nil, hub.Errorf(hub.InvalidArgument, "method %s not allowed", r.Method))
	}
}

type loginData struct {
	Next     string
	NoTokens bool
}

// logout ends the session (POST with its CSRF token).
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	s, ok, err := c.sessions.get(r)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	if r.Method != http.MethodPost || !ok || !sameToken(r.PostFormValue(csrfField), s.CSRF) {
		c.fail(w, r, nil, &auth.DeniedError{Field: csrfField, Anchor: "the-web-console", Msg: "ui: sign out with the button"})
		return
	}
	if err := c.sessions.end(w, r); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
}

// safeNext keeps a redirect target on the console (no open redirect): a path below
// /ui/ (after cleaning), no scheme, host or backslash, not the portal.
func safeNext(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.HasPrefix(s, "//") || strings.ContainsAny(s, "\\\r\n") {
		return Prefix + "/"
	}
	clean := path.Clean(u.Path)
	if !strings.HasPrefix(u.Path, Prefix+"/") || !strings.HasPrefix(clean+"/", Prefix+"/") || clean == PortalPrefix ||
		strings.HasPrefix(clean, PortalPrefix+"/") || strings.HasPrefix(u.Path, PortalPrefix) {
		return Prefix + "/"
	}
	return s
}

// loopback reports whether r comes from a loopback address without proxy headers.
func loopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback() && r.Header.Get("Forwarded") == "" && r.Header.Get("X-Forwarded-For") == "" &&
		r.Header.Get("X-Real-Ip") == ""
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func randomToken() string { return base64.RawURLEncoding.EncodeToString(randomBytes(32)) }
