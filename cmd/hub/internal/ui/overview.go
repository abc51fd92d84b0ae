package ui

import (
	"html/template"
	"net/http"
	"sort"
	"strings"
	"time"
)

// card is one panel of the overview: a chart and the current numbers beside it.
type card struct {
	Title string
	Chart template.HTML
	Now   []stat
	Note  string
}

type stat struct {
	Label string
	Value string
	Class string // "bad" when it wants attention
	Line  string // the colour class (s1..s4) of the chart's line for this value, if drawn
}

// newCard renders c over ss and gives each stat named like one of c's series that
// series' colour, so the figures under a chart are its legend.
func newCard(title, note string, ss []sample, now time.Time, c chart, stats ...stat) card {
	lines := make(map[string]string, len(c.Series))
	for _, s := range c.Series {
		lines[s.Name] = s.Class
	}
	for i := range stats {
		stats[i].Line = lines[stats[i].Label]
	}
	return card{Title: title, Note: note, Chart: c.render(ss, now), Now: stats}
}

type overviewData struct {
	Cards   []card
	Samples int
	Every   string
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "overview", &page{Title: "Overview", Nav: "overview", Data: c.overviewData()})
}

// overviewPanel is the live part, refreshed by htmx.
func (c *Console) overviewPanel(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "overview:panel", &page{Title: "Overview", Nav: "overview", Data: c.overviewData()})
}

func (c *Console) overviewData() overviewData {
	ss := c.sampler.samples()
	now := time.Now()
	var last sample
	if len(ss) > 0 {
		last = ss[len(ss)-1]
	}
	lv := func(k string) string { return num(last.Levels[k]) }
	rt := func(k string) string { return num(last.Rates[k]) + "/s" }
	bad := func(k string) string {
		if last.Levels[k] > 0 {
			return "bad"
		}
		return ""
	}
	d := overviewData{Samples: len(ss), Every: c.cfg.SampleEvery.String()}
	d.Cards = append(d.Cards,
		newCard("Events per second", "this replica's counters", ss, now,
			chart{ID: "c-events", Title: "Events in and out per second", Unit: "/s", Series: []series{
				{Name: "in", Class: "s1", Key: "in", Rate: true}, {Name: "out", Class: "s2", Key: "out", Rate: true},
				{Name: "webhooks delivered", Class: "s3", Key: "delivered", Rate: true}}},
			stat{Label: "in", Value: rt("in")}, stat{Label: "out", Value: rt("out")}, stat{Label: "webhooks delivered", Value: rt("delivered")}),
		newCard("Failures per second", "failed attempts and sends, dead-lettered entries", ss, now,
			chart{ID: "c-fail", Title: "Failures per second", Unit: "/s", Series: []series{
				{Name: "failed", Class: "s4", Key: "failed", Rate: true}, {Name: "dead-lettered", Class: "s3", Key: "dlq", Rate: true}}},
			stat{Label: "failed", Value: rt("failed")}, stat{Label: "dead-lettered", Value: rt("dlq")}),
		newCard("Deliveries by state", "webhook ledger, every replica", ss, now,
			chart{ID: "c-deliveries", Title: "Webhook deliveries waiting, retrying and dead", Series: []series{
				{Name: "pending", Class: "s1", Key: "d_pending"}, {Name: "retrying", Class: "s3", Key: "d_retrying"},
				{Name: "dead", Class: "s4", Key: "d_dead"}}},
			stat{Label: "pending", Value: lv("d_pending")}, stat{Label: "running", Value: lv("d_running")}, stat{Label: "retrying", Value: lv("d_retrying")},
			stat{Label: "delivered", Value: lv("d_delivered")}, stat{Label: "dead", Value: lv("d_dead"), Class: bad("d_dead")}),
		newCard("Breakers", "per endpoint", ss, now,
			chart{ID: "c-breakers", Title: "Endpoint breakers open and half-open", Series: []series{
				{Name: "open", Class: "s4", Key: "b_open"}, {Name: "half-open", Class: "s3", Key: "b_half_open"}}},
			stat{Label: "closed", Value: lv("b_closed")}, stat{Label: "open", Value: lv("b_open"), Class: bad("b_open")},
			stat{Label: "half-open", Value: lv("b_half_open"), Class: bad("b_half_open")}),
		newCard("Outbox backlog", "rows waiting or in flight, and dead", ss, now,
			chart{ID: "c-outbox", Title: "Outbox backlog and dead rows", Series: []series{
				{Name: "backlog", Class: "s1", Key: "o_backlog"}, {Name: "dead", Class: "s4", Key: "o_dead"}}},
			stat{Label: "backlog", Value: lv("o_backlog")}, stat{Label: "dead", Value: lv("o_dead"), Class: bad("o_dead")}),
	)
	var dlqs []string
	for k := range last.Levels {
		if name, ok := strings.CutPrefix(k, "dlq:"); ok {
			dlqs = append(dlqs, name)
		}
	}
	sort.Strings(dlqs)
	var ser []series
	var stats []stat
	for i, n := range dlqs {
		ser = append(ser, series{Name: n, Class: []string{"s1", "s2", "s3", "s4"}[i%4], Key: "dlq:" + n})
		stats = append(stats, stat{Label: n, Value: lv("dlq:" + n), Class: bad("dlq:" + n)})
	}
	dc := newCard("Dead-letter depths", "entries waiting in each stream DLQ", ss, now,
		chart{ID: "c-dlq", Title: "Dead-letter queue depths", Series: ser}, stats...)
	if len(dlqs) == 0 {
		dc.Note = "no stream transport or source with a DLQ"
	}
	d.Cards = append(d.Cards, dc)
	return d
}
