package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/internal/problem"
	"github.com/koder/eventhub/transports/webhook"
)

// site is the console or the portal: the same handlers, a different base path, nav and
// credential carrier.
type site struct {
	Base   string
	Portal bool
}

var (
	consoleSite = &site{Base: Prefix}
	portalSite  = &site{Base: PortalPrefix, Portal: true}
)

// page is what every template gets.
type page struct {
	Title string
	Nav   string // the active nav item
	Site  *site
	P     auth.Principal
	// Flash is a success message, Error a failure shown at the top of the page.
	Flash, Error string
	Data         any

	csrf  string
	link  string
	theme string // the portal's theme query (?accent=...)
}

// CSRF is the form token of the page's session or link.
func (p *page) CSRF() string { return p.csrf }

// Operator reports whether the viewer sees every tenant.
func (p *page) Operator() bool { return p.P.Operator() }

// CanWrite reports whether the viewer may change things (forms are shown only then;
// the handlers check again).
func (p *page) CanWrite() bool { return p.P.Can(auth.ScopeWrite) }

// U builds a URL on the page's site: path segments (escaped) up to a "?" argument,
// then key/value query pairs (empty values left out). On the portal the link token is
// appended, since it is the credential.
func (p *page) U(parts ...string) string {
	base := consoleSite.Base
	if p.Site != nil {
		base = p.Site.Base
	}
	var b strings.Builder
	b.WriteString(base)
	q := url.Values{}
	inQuery := false
	for i := 0; i < len(parts); i++ {
		switch {
		case parts[i] == "?":
			inQuery = true
		case inQuery:
			if i+1 < len(parts) && parts[i+1] != "" {
				q.Set(parts[i], parts[i+1])
			}
			i++
		default:
			b.WriteString("/")
			b.WriteString(url.PathEscape(parts[i]))
		}
	}
	if p.link != "" {
		q.Set(linkParam, p.link)
	}
	if len(q) > 0 {
		b.WriteString("?")
		b.WriteString(q.Encode())
	}
	return b.String()
}

// Link is the portal's link token ("" on the console), for GET forms that must carry
// it.
func (p *page) Link() string { return p.link }

// Static is the URL of an embedded static file.
func (p *page) Static(name string) string { return Prefix + "/static/" + name }

// ThemeCSS is the portal's theme stylesheet URL.
func (p *page) ThemeCSS() string {
	u := PortalPrefix + "/theme.css"
	if p.theme != "" {
		u += "?" + p.theme
	}
	return u
}

type templates struct{ pages map[string]*template.Template }

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"iso": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	},
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return ago(time.Since(t))
	},
	"ms": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " ms" },
	// count writes n with its noun, singular for 1: {{count .Trips "time" "times"}}.
	"count": func(n any, one, many string) string {
		s := fmt.Sprint(n)
		if s == "1" {
			return s + " " + one
		}
		return s + " " + many
	},
	"json": func(v any) string {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	},
	"pretty": func(raw []byte) string {
		var out bytes.Buffer
		if json.Indent(&out, raw, "", "  ") != nil {
			return string(raw)
		}
		return out.String()
	},
	"str":  func(v any) string { return fmt.Sprint(v) },
	"join": strings.Join,
	"itoa": func(v int64) string { return strconv.FormatInt(v, 10) },
	"add":  func(a, b int) int { return a + b },
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d ago"
}

// parseTemplates parses templates/layout.html with the shared partials once per page
// file, so each page defines its own "content" block.
func parseTemplates() (*templates, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(files, "templates/page_*.html")
	if err != nil {
		return nil, err
	}
	t := &templates{pages: map[string]*template.Template{}}
	for _, n := range names {
		c, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := c.ParseFS(files, n); err != nil {
			return nil, err
		}
		t.pages[strings.TrimSuffix(strings.TrimPrefix(n, "templates/page_"), ".html")] = c
	}
	return t, nil
}

// render writes a page (or, for a name starting with "fragment:", only that block of
// the page's template: htmx refreshes).
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, pg *page) {
	c.fill(r, pg)
	tmplName, block := name, "layout.html"
	if i := strings.IndexByte(name, ':'); i > 0 {
		tmplName, block = name[:i], name[i+1:]
	}
	t := c.tmpl.pages[tmplName]
	if t == nil {
		http.Error(w, "no template "+tmplName, http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, pg); err != nil {
		c.log.Error("ui: render", "page", name, "error", err)
		http.Error(w, "render error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fill sets what every page takes from the request.
func (c *Console) fill(r *http.Request, pg *page) {
	if p, ok := auth.FromContext(r.Context()); ok {
		pg.P = p
	}
	if pg.Site == nil {
		pg.Site = consoleSite
		if v, _ := r.Context().Value(keyLink).(string); v != "" {
			pg.Site, pg.link = portalSite, v
		}
	}
	if pg.csrf == "" {
		pg.csrf, _ = r.Context().Value(keyCSRF).(string)
	}
	if pg.Site.Portal {
		pg.theme = themeQuery(r.URL.Query())
	}
	if pg.Flash == "" && r.Method == http.MethodGet {
		pg.Flash = flashes[r.URL.Query().Get("done")]
	}
}

// flashes are the messages an action's redirect may ask for (?done=key): fixed texts,
// so a crafted link cannot put words of its own on a console page.
var flashes = map[string]string{
	"saved":    "Saved.",
	"deleted":  "Endpoint deleted.",
	"test":     "Test event queued.",
	"resent":   "Delivery queued for another attempt.",
	"replayed": "Replayed.",
	"purged":   "Purged.",
	"outbox":   "Outbox rows queued for another attempt.",
}

// fail renders an error page with the status the error's hub code maps to (the
// problem table the API uses), its message, and a way back.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, pg *page, err error) {
	pr := problem.FromError(err)
	if pg == nil {
		pg = &page{}
	}
	pg.Title, pg.Error = http.StatusText(pr.Status), pr.Detail
	if pr.Field != "" {
		pg.Error += " (" + pr.Field + ")"
	}
	pg.Data = pr
	c.render(w, r, pr.Status, "error", pg)
}

// rowsOf is a page with a list of deliveries, for the shared delivery table.
type rowsOf struct {
	*page
	Rows   []*webhook.Delivery
	Select bool
}

// WithRows passes deliveries to the shared delivery table.
func (p *page) WithRows(rows []*webhook.Delivery) rowsOf { return rowsOf{page: p, Rows: rows} }
