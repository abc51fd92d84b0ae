package ui

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// Server-side SVG charts: a polyline per series over the sample ring, drawn as inline
// SVG so the page needs no charting script and the CSP stays strict (colours come from
// classes in console.css, never from style attributes). Each chart is an image with a
// title and a description giving the latest values, so a screen reader gets the numbers
// the lines show.

const (
	chartW, chartH = 320, 110
	padL, padB     = 36, 16
)

type series struct {
	Name  string
	Class string // s1..s4: the line colour
	Key   string // the sample key
	Rate  bool   // Rates (per second) rather than Levels
}

type chart struct {
	ID, Title, Unit string
	Series          []series
}

// render draws c over samples (oldest first) spanning the last hour.
func (c chart) render(samples []sample, now time.Time) template.HTML {
	var b strings.Builder
	latest := make([]string, 0, len(c.Series))
	maxV := 0.0
	for _, s := range c.Series {
		for _, sm := range samples {
			if v, ok := value(sm, s); ok {
				maxV = math.Max(maxV, v)
			}
		}
		if len(samples) > 0 {
			if v, ok := value(samples[len(samples)-1], s); ok {
				latest = append(latest, s.Name+" "+num(v)+c.Unit)
			}
		}
	}
	top := niceCeil(maxV)
	desc := "No samples yet."
	if len(latest) > 0 {
		desc = "Now: " + strings.Join(latest, ", ") + ". Scale 0 to " + num(top) + c.Unit + " over the last hour."
	}
	id := html.EscapeString(c.ID)
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-labelledby="%s-t %s-d" preserveAspectRatio="none">`, chartW, chartH, id, id)
	fmt.Fprintf(&b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, id, html.EscapeString(c.Title), id, html.EscapeString(desc))
	plotW, plotH := float64(chartW-padL), float64(chartH-padB)
	for _, f := range []float64{0, 0.5, 1} {
		y := plotH - f*plotH + 0.5
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padL, chartW, y, y)
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%.1f" text-anchor="end">%s</text>`, padL-4, math.Max(y+3, 9), html.EscapeString(num(f*top)))
	}
	// The x axis spans the last hour, or the time since the first sample when the ring
	// holds less (a console that just started draws its minutes across the width).
	start := now.Add(-sampleWindow)
	if len(samples) > 0 && samples[0].At.After(start) {
		start = samples[0].At
	}
	span := max(now.Sub(start), time.Second)
	fmt.Fprintf(&b, `<text class="axis" x="%d" y="%d">−%s</text><text class="axis" x="%d" y="%d" text-anchor="end">now</text>`,
		padL, chartH-3, html.EscapeString(short(span)), chartW, chartH-3)
	for _, s := range c.Series {
		var pts []string
		for _, sm := range samples {
			v, ok := value(sm, s)
			if !ok {
				continue
			}
			x := float64(padL) + plotW*math.Max(0, sm.At.Sub(start).Seconds())/span.Seconds()
			y := plotH
			if top > 0 {
				y = plotH - plotH*v/top
			}
			pts = append(pts, strconv.FormatFloat(x, 'f', 1, 64)+","+strconv.FormatFloat(y, 'f', 1, 64))
		}
		if len(pts) == 1 {
			pts = append(pts, pts[0]) // one sample: a dot-sized line
		}
		if len(pts) > 0 {
			fmt.Fprintf(&b, `<polyline class="line %s" points="%s"/>`, html.EscapeString(s.Class), strings.Join(pts, " "))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built above from escaped text and numbers only
}

// short writes a span as the axis label: 45s, 12 min, 60 min.
func short(d time.Duration) string {
	if d < time.Minute {
		return strconv.Itoa(int(d.Seconds())) + "s"
	}
	return strconv.Itoa(int(d.Round(time.Minute).Minutes())) + " min"
}

func value(sm sample, s series) (float64, bool) {
	m := sm.Levels
	if s.Rate {
		m = sm.Rates
	}
	v, ok := m[s.Key]
	return v, ok
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten (at least 1).
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func num(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return strconv.FormatInt(int64(v), 10)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
