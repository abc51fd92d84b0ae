package ui

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/koder/eventhub/cmd/hub/internal/admin"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/webhook"
)

// filterKeys are the delivery filter's form fields, in the admin API's names
// (admin.ParseDeliveryQuery): a console URL and an API query select the same page.
var filterKeys = []string{"state", "endpoint", "type", "tenant", "since", "until"}

type deliveriesData struct {
	Filter   map[string]string
	States   []string
	Rows     []*webhook.Delivery
	Next     string
	Endpoint []webhook.EndpointView // for the endpoint filter's choices
	// Query is the filter as URL pairs, for the next-page link and the bulk resend.
	Query []string
	// Live refreshes the list every few seconds (htmx) on the first page.
	Live bool
	// Self is this page's URL (the live refresh), NextURL the next page's.
	Self, NextURL string
	Resent        string // how many the last bulk resend queued
}

func (c *Console) deliveries(w http.ResponseWriter, r *http.Request) {
	t, ok := c.wh(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	// Times come from datetime-local inputs (no zone: UTC here) or RFC 3339.
	for _, k := range []string{"since", "until"} {
		if v := q.Get(k); v != "" {
			q.Set(k, normTime(v))
		}
	}
	dq, err := admin.ParseDeliveryQuery(ctx, q)
	d := deliveriesData{Filter: map[string]string{}, States: []string{"pending", "running", "retrying", "delivered", "dead"}}
	for _, k := range filterKeys {
		d.Filter[k] = r.URL.Query().Get(k)
		d.Query = append(d.Query, k, d.Filter[k])
	}
	pg := &page{Title: "Deliveries", Nav: "deliveries", Data: &d}
	if err != nil {
		pg.Error = err.Error()
		c.render(w, r, http.StatusBadRequest, "deliveries", pg)
		return
	}
	if dq.Limit == 0 {
		dq.Limit = webhook.DefaultPageSize
	}
	res, err := t.DeliveryPage(ctx, dq)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	d.Rows = res.Deliveries
	if res.Next > 0 {
		d.Next = strconv.FormatInt(res.Next, 10)
	}
	d.Live = dq.Before == 0
	c.fill(r, pg)
	d.Self = pg.U(append([]string{"deliveries", "?"}, d.Query...)...)
	if d.Next != "" {
		d.NextURL = pg.U(append([]string{"deliveries", "?", "before", d.Next}, d.Query...)...)
	}
	if n := r.URL.Query().Get("resent"); n != "" {
		if _, err := strconv.Atoi(n); err == nil {
			d.Resent = n
		}
	}
	if eps, err := t.ListEndpoints(ctx, webhook.Page{Limit: 200, TenantID: admin.ScopedTenant(ctx)}); err == nil {
		d.Endpoint = eps
	}
	if r.Header.Get("HX-Request") == "true" {
		c.render(w, r, http.StatusOK, "deliveries:rows", pg)
		return
	}
	c.render(w, r, http.StatusOK, "deliveries", pg)
}

// normTime turns a datetime-local value (2026-01-02T15:04) into RFC 3339 UTC; other
// values pass unchanged (ParseDeliveryQuery reports them).
func normTime(v string) string {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return v
}

// ownedDelivery reads a delivery the viewer may see (another tenant's is NotFound).
func ownedDelivery(r *http.Request, t *webhook.Transport, idText string) (*webhook.Delivery, error) {
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return nil, hub.Errorf(hub.InvalidArgument, "delivery %q: want a number", idText)
	}
	d, err := t.Delivery(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if err := admin.CheckOwner(r.Context(), "webhook: delivery", idText, d.TenantID); err != nil {
		return nil, err
	}
	return d, nil
}

type deliveryData struct {
	D     *webhook.Delivery
	Event string // the delivered event, pretty JSON
}

func (c *Console) delivery(w http.ResponseWriter, r *http.Request) {
	t, ok := c.wh(w, r)
	if !ok {
		return
	}
	d, err := ownedDelivery(r, t, r.PathValue("id"))
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	data := deliveryData{D: d}
	if ev, err := d.Event(); err == nil {
		data.Event = funcs["json"].(func(any) string)(ev)
	}
	c.render(w, r, http.StatusOK, "delivery", &page{Title: "Delivery " + r.PathValue("id"), Nav: "deliveries", Data: data})
}

func (c *Console) resendOne(w http.ResponseWriter, r *http.Request) {
	t, ok := c.wh(w, r)
	if !ok {
		return
	}
	d, err := ownedDelivery(r, t, r.PathValue("id"))
	if err == nil {
		_, err = t.Resend(r.Context(), d.ID)
	}
	tenant := ""
	if d != nil {
		tenant = d.TenantID
	}
	c.cfg.Admin.AuditAction(r, "delivery.resend", "deliveries/"+r.PathValue("id"), tenant, err)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.redirect(w, r, "deliveries", r.PathValue("id"), "?", "done", "resent")
}

// resendMatching resends every delivery the posted filter matches.
func (c *Console) resendMatching(w http.ResponseWriter, r *http.Request) {
	t, ok := c.wh(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	v := url.Values{}
	for _, k := range filterKeys {
		if x := r.PostFormValue(k); x != "" {
			v.Set(k, normTime(x))
		}
	}
	dq, err := admin.ParseDeliveryQuery(ctx, v)
	n := 0
	if err == nil {
		n, err = t.ResendMatching(ctx, dq)
	}
	c.cfg.Admin.AuditAction(r, "delivery.resend", "deliveries/matching", admin.ScopedTenant(ctx), err)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	back := []string{"deliveries", "?", "resent", strconv.Itoa(n)}
	for _, k := range filterKeys {
		back = append(back, k, r.PostFormValue(k))
	}
	c.redirect(w, r, back...)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
