package ui

import (
	"io/fs"
	"net/http"
	"strings"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/webhook"
)

// route is one page or action of a site.
type route struct {
	pattern  string // method and path below the site's base
	operator bool   // operators only (what every tenant shares)
	// reads marks a POST that changes nothing (the schema validator): the read scope
	// is enough; the CSRF token is still required.
	reads bool
	h     func(c *Console, w http.ResponseWriter, r *http.Request)
}

// consoleRoutes are the operator console's pages and actions. Every POST is an action:
// the CSRF test walks this table.
var consoleRoutes = []route{
	{pattern: "GET /{$}", operator: true, h: (*Console).overview},
	{pattern: "GET /overview/panel", operator: true, h: (*Console).overviewPanel},
	{pattern: "GET /endpoints", operator: false, h: (*Console).endpoints},
	{pattern: "POST /endpoints", operator: false, h: (*Console).createEndpoint},
	{pattern: "GET /endpoints/{id}", operator: false, h: (*Console).endpoint},
	{pattern: "POST /endpoints/{id}", operator: false, h: (*Console).updateEndpoint},
	{pattern: "POST /endpoints/{id}/rotate", operator: false, h: (*Console).rotateSecret},
	{pattern: "POST /endpoints/{id}/test", operator: false, h: (*Console).sendTest},
	{pattern: "POST /endpoints/{id}/delete", operator: false, h: (*Console).deleteEndpoint},
	{pattern: "GET /deliveries", operator: false, h: (*Console).deliveries},
	{pattern: "GET /deliveries/{id}", operator: false, h: (*Console).delivery},
	{pattern: "POST /deliveries/{id}/resend", operator: false, h: (*Console).resendOne},
	{pattern: "POST /deliveries/resend", operator: false, h: (*Console).resendMatching},
	{pattern: "GET /dlq", operator: false, h: (*Console).dlqIndex},
	{pattern: "GET /dlq/{name}", operator: false, h: (*Console).dlqList},
	{pattern: "GET /dlq/{name}/entry/{id}", operator: false, h: (*Console).dlqEntry},
	{pattern: "POST /dlq/{name}/replay", operator: false, h: (*Console).dlqReplay},
	{pattern: "POST /dlq/{name}/purge", operator: false, h: (*Console).dlqPurge},
	{pattern: "GET /outbox", operator: true, h: (*Console).outboxPage},
	{pattern: "POST /outbox/resend", operator: true, h: (*Console).outboxResend},
	{pattern: "GET /streams", operator: true, h: (*Console).streams},
	{pattern: "GET /streams/events", operator: true, h: (*Console).streamEvents},
	{pattern: "GET /schemas", operator: false, h: (*Console).schemas},
	{pattern: "GET /schemas/{type}", operator: false, h: (*Console).schemaPage},
	{pattern: "POST /schemas/{type}/validate", reads: true, h: (*Console).validateJSON},
}

// portalRoutes are the tenant portal's: the tenant's endpoints and deliveries, with
// the same handlers as the console (their queries are scoped by the link's tenant).
var portalRoutes = []route{
	{pattern: "GET /{$}", operator: false, h: (*Console).endpoints},
	{pattern: "GET /theme.css", operator: false, h: (*Console).themeCSS},
	{pattern: "GET /endpoints", operator: false, h: (*Console).endpoints},
	{pattern: "POST /endpoints", operator: false, h: (*Console).createEndpoint},
	{pattern: "GET /endpoints/{id}", operator: false, h: (*Console).endpoint},
	{pattern: "POST /endpoints/{id}", operator: false, h: (*Console).updateEndpoint},
	{pattern: "POST /endpoints/{id}/rotate", operator: false, h: (*Console).rotateSecret},
	{pattern: "POST /endpoints/{id}/test", operator: false, h: (*Console).sendTest},
	{pattern: "GET /deliveries", operator: false, h: (*Console).deliveries},
	{pattern: "GET /deliveries/{id}", operator: false, h: (*Console).delivery},
	{pattern: "POST /deliveries/{id}/resend", operator: false, h: (*Console).resendOne},
	{pattern: "POST /deliveries/resend", operator: false, h: (*Console).resendMatching},
}

// Actions lists the method and full path pattern of every console and portal action
// (POST), for the CSRF test and the docs.
func Actions() []string {
	out := []string{"POST " + Prefix + "/login", "POST " + Prefix + "/logout"}
	for _, set := range []struct {
		base string
		rs   []route
	}{{Prefix, consoleRoutes}, {PortalPrefix, portalRoutes}} {
		for _, r := range set.rs {
			if len(r.pattern) > 5 && r.pattern[:5] == "POST " {
				out = append(out, "POST "+set.base+r.pattern[5:])
			}
		}
	}
	return out
}

// routes builds a site's mux. Writes are gated by checkWrite (scope and CSRF token)
// before the handler runs; operator-only pages refuse tenant principals.
func (c *Console) routes(s *site) http.Handler {
	mux := http.NewServeMux()
	rs := consoleRoutes
	if s.Portal {
		rs = portalRoutes
	}
	for _, rt := range rs {
		method, path, _ := strings.Cut(rt.pattern, " ")
		h := func(w http.ResponseWriter, r *http.Request) {
			p, _ := auth.FromContext(r.Context())
			if rt.operator && !p.Operator() {
				c.fail(w, r, nil, &auth.DeniedError{Anchor: "principals-and-tenant-scoping",
					Msg: "this page shows every tenant's data; it is for operators"})
				return
			}
			if method == http.MethodPost {
				if err := checkWrite(r, rt.reads); err != nil {
					c.cfg.Admin.AuditAction(r, "console.refused", method+" "+r.URL.Path, p.Tenant, err)
					c.fail(w, r, nil, err)
					return
				}
			}
			rt.h(c, w, r)
		}
		mux.HandleFunc(method+" "+s.Base+path, h)
		if path == "/{$}" && s.Portal {
			mux.HandleFunc(method+" "+s.Base, h) // /ui/portal?link=... as links print it
		}
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, nil, hub.Errorf(hub.NotFound, "no page at %s", r.URL.Path))
	})
	return mux
}

// wh returns the webhook transport or renders why there is none.
func (c *Console) wh(w http.ResponseWriter, r *http.Request) (*webhook.Transport, bool) {
	if t := c.cfg.Admin.Webhook(); t != nil {
		return t, true
	}
	c.fail(w, r, nil, hub.Errorf(hub.NotFound, "no webhook transport is configured"))
	return nil, false
}

// staticHandler serves the embedded files, cacheable for an hour (their names do not
// change within a version; a restart with a new binary serves the new ones).
func staticHandler(sub fs.FS) http.Handler {
	fsrv := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}
