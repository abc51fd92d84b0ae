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
		card{Title: "Events per second", Note: "this replica's counters",
			Chart: chart{ID: "c-events", Title: "Events in and out per second", Unit: "/s", Series: []series{
				{Name: "in", Class: "s1", Key: "in", Rate: true}, {Name: "out", Class: "s2", Key: "out", Rate: true},
				{Name: "webhooks delivered", Class: "s3", Key: "delivered", Rate: true}}}.render(ss, now),
			Now: []stat{{"in", rt("in"), ""}, {"out", rt("out"), ""}, {"webhooks delivered", rt("delivered"), ""}}},
		card{Title: "Failures per second", Note: "failed attempts and sends, dead-lettered entries",
			Chart: chart{ID: "c-fail", Title: "Failures per second", Unit: "/s", Series: []series{
				{Name: "failed", Class: "s4", Key: "failed", Rate: true}, {Name: "dead-lettered", Class: "s3", Key: "dlq", Rate: true}}}.render(ss, now),
			Now: []stat{{"failed", rt("failed"), ""}, {"dead-lettered", rt("dlq"), ""}}},
		card{Title: "Deliveries by state", Note: "webhook ledger, every replica",
			Chart: chart{ID: "c-deliveries", Title: "Webhook deliveries waiting, retrying and dead", Series: []series{
				{Name: "pending", Class: "s1", Key: "d_pending"}, {Name: "retrying", Class: "s3", Key: "d_retrying"},
				{Name: "dead", Class: "s4", Key: "d_dead"}}}.render(ss, now),
			Now: []stat{{"pending", lv("d_pending"), ""}, {"running", lv("d_running"), ""}, {"retrying", lv("d_retrying"), ""},
				{"delivered", lv("d_delivered"), ""}, {"dead", lv("d_dead"), bad("d_dead")}}},
		card{Title: "Breakers", Note: "per endpoint",
			Chart: chart{ID: "c-breakers", Title: "Endpoint breakers open and half-open", Series: []series{
				{Name: "open", Class: "s4", Key: "b_open"}, {Name: "half-open", Class: "s3", Key: "b_half_open"}}}.render(ss, now),
			Now: []stat{{"closed", lv("b_closed"), ""}, {"open", lv("b_open"), bad("b_open")}, {"half-open", lv("b_half_open"), bad("b_half_open")}}},
		card{Title: "Outbox backlog", Note: "rows waiting or in flight, and dead",
			Chart: chart{ID: "c-outbox", Title: "Outbox backlog and dead rows", Series: []series{
				{Name: "backlog", Class: "s1", Key: "o_backlog"}, {Name: "dead", Class: "s4", Key: "o_dead"}}}.render(ss, now),
			Now: []stat{{"backlog", lv("o_backlog"), ""}, {"dead", lv("o_dead"), bad("o_dead")}}},
	)
	var dlqs []string
	for k := range last.Levels {
		if name, ok := strings.CutPrefix(k, "dlq:"); ok {
			dlqs = append(dlqs, name)
		}
	}
	sort.Strings(dlqs)
	dc := card{Title: "Dead-letter depths", Note: "entries waiting in each stream DLQ"}
	var ser []series
	for i, n := range dlqs {
		ser = append(ser, series{Name: n, Class: []string{"s1", "s2", "s3", "s4"}[i%4], Key: "dlq:" + n})
		dc.Now = append(dc.Now, stat{n, lv("dlq:" + n), bad("dlq:" + n)})
	}
	dc.Chart = chart{ID: "c-dlq", Title: "Dead-letter queue depths", Series: ser}.render(ss, now)
	if len(dlqs) == 0 {
		dc.Note = "no stream transport or source with a DLQ"
	}
	d.Cards = append(d.Cards, dc)
	return d
}
