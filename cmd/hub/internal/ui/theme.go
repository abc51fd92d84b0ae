package ui

import (
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/koder/eventhub/cmd/hub/internal/config"
)

// The portal's theme: a stylesheet of CSS variables, from admin.ui.theme and, for the
// colours, the link's own query (?accent=%23d33&background=%23fff), so one hub serves
// portals that look like each customer's site. Every value is checked against the
// patterns of config.ThemeVars before it is written into the stylesheet; anything else
// is dropped, so no query can inject CSS.

// themeLinkVars are the variables a portal URL may override.
var themeLinkVars = []string{"accent", "background", "foreground", "muted"}

// themeQuery keeps the theme parameters of a portal URL (for the stylesheet link).
func themeQuery(q url.Values) string {
	out := url.Values{}
	for _, k := range themeLinkVars {
		if v := q.Get(k); v != "" && config.ThemeVars[k].MatchString(v) {
			out.Set(k, v)
		}
	}
	return out.Encode()
}

func (c *Console) themeCSS(w http.ResponseWriter, r *http.Request) {
	vars := map[string]string{}
	for k, v := range c.cfg.UI.Theme {
		if re, ok := config.ThemeVars[k]; ok && re.MatchString(v) {
			vars[k] = v
		}
	}
	q := r.URL.Query()
	for _, k := range themeLinkVars {
		if v := q.Get(k); v != "" && config.ThemeVars[k].MatchString(v) {
			vars[k] = v
		}
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(":root {\n")
	for _, k := range keys {
		b.WriteString("  --hub-" + k + ": " + vars[k] + ";\n")
	}
	b.WriteString("}\n")
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write([]byte(b.String()))
}
