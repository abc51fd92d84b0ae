package config

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// UI is the web console and tenant portal served by the admin listener at /ui
// (docs/console.md).
type UI struct {
	// Enabled serves the console. Default true; false leaves /ui to the API (404).
	Enabled *bool `yaml:"enabled"`
	// FrameAncestors are the origins (https://app.example.com) whose pages may embed
	// the tenant portal in an iframe: the portal's Content-Security-Policy
	// frame-ancestors. Default none: the portal cannot be framed. The operator console
	// can never be framed.
	FrameAncestors []string `yaml:"frame_ancestors"`
	// SessionTTL is the life of an operator's signed-in session. Default 12h, at most 7 days.
	SessionTTL time.Duration `yaml:"session_ttl"`
	// Theme sets the portal's CSS variables: accent, background, foreground, muted,
	// radius and font. Colours are #rgb or #rrggbb, radius a length in px or rem, font a
	// list of family names. A portal link may override the colours (?accent=...).
	Theme map[string]string `yaml:"theme"`
	// SampleEvery is how often the overview samples its charts (the last hour is kept,
	// so 10s is 360 points). Default 10s, between 100ms and 1m.
	SampleEvery time.Duration `yaml:"sample_every"`
}

// DefaultSessionTTL is UI.SessionTTL's default.
const DefaultSessionTTL = 12 * time.Hour

// MaxSessionTTL bounds UI.SessionTTL.
const MaxSessionTTL = 7 * 24 * time.Hour

// On reports whether the console is served.
func (u UI) On() bool { return u.Enabled == nil || *u.Enabled }

// ThemeVars are the portal's themable CSS variables and the pattern each value must
// match: values end up in a stylesheet, so only these shapes are accepted.
var ThemeVars = map[string]*regexp.Regexp{
	"accent":     colourRE,
	"background": colourRE,
	"foreground": colourRE,
	"muted":      colourRE,
	"radius":     regexp.MustCompile(`^[0-9]{1,2}(\.[0-9])?(px|rem)$`),
	"font":       regexp.MustCompile(`^[A-Za-z0-9 ,\-]{1,100}$`),
}

var colourRE = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

func (u UI) validate() error {
	var errs []error
	for i, o := range u.FrameAncestors {
		p, err := url.Parse(o)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || (p.Path != "" && p.Path != "/") ||
			p.RawQuery != "" || p.User != nil || strings.ContainsAny(o, " ;,'\"") {
			errs = append(errs, Field("frame_ancestors", "entry %d %q: want an origin such as https://app.example.com", i+1, o))
		}
	}
	if u.SampleEvery != 0 && (u.SampleEvery < 100*time.Millisecond || u.SampleEvery > time.Minute) {
		errs = append(errs, Field("sample_every", "between 100ms and 1m"))
	}
	if u.SessionTTL < 0 || u.SessionTTL > MaxSessionTTL {
		errs = append(errs, Field("session_ttl", "between 0 and %s", MaxSessionTTL))
	}
	for k, v := range u.Theme {
		re, ok := ThemeVars[k]
		switch {
		case !ok:
			errs = append(errs, Field("theme", "unknown variable %q (accent, background, foreground, muted, radius, font)", k))
		case !re.MatchString(v):
			errs = append(errs, Field("theme", "%s %q: not an accepted value (colours #rgb or #rrggbb, radius like 6px, font family names)", k, v))
		}
	}
	return errors.Join(errs...)
}
