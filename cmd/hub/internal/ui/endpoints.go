package ui

import (
	"net/http"
	"strings"
	"time"

	"github.com/koder/eventhub/cmd/hub/internal/admin"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/webhook"
)

// endpointsPage is the size of a page of the endpoint list.
const endpointsPage = 50

type endpointRow struct {
	webhook.EndpointView
	Breaker webhook.BreakerState
}

type endpointsData struct {
	Rows []endpointRow
	Next string // keyset cursor (the last id shown)
	Form endpointForm
}

// endpointForm is the create form, kept on an error with the message beside its field.
type endpointForm struct {
	URL, Types, Tenant, Description   string
	URLError, TypesError, TenantError string
}

func (c *Console) endpoints(w http.ResponseWriter, r *http.Request) {
	c.endpointsWith(w, r, http.StatusOK, endpointForm{Types: "*"}, "")
}

func (c *Console) endpointsWith(w http.ResponseWriter, r *http.Request, status int, form endpointForm, flash string) {
	t, ok := c.wh(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	views, err := t.ListEndpoints(ctx, webhook.Page{After: r.URL.Query().Get("after"), Limit: endpointsPage + 1, TenantID: admin.ScopedTenant(ctx)})
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	d := endpointsData{Form: form}
	if len(views) > endpointsPage {
		views = views[:endpointsPage]
		d.Next = views[len(views)-1].ID
	}
	for _, v := range views {
		row := endpointRow{EndpointView: v}
		if b, err := t.Breaker(ctx, v.ID); err == nil {
			row.Breaker = b.State
		}
		d.Rows = append(d.Rows, row)
	}
	c.render(w, r, status, "endpoints", &page{Title: "Endpoints", Nav: "endpoints", Flash: flash, Data: d})
}

// splitTypes reads a types field: patterns separated by commas or spaces.
func splitTypes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' })
}

func (c *Console) createEndpoint(w http.ResponseWriter, r *http.Request) {
	t, ok := c.wh(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	f := endpointForm{URL: strings.TrimSpace(r.PostFormValue("url")), Types: r.PostFormValue("types"),
		Tenant: strings.TrimSpace(r.PostFormValue("tenant")), Description: r.PostFormValue("description")}
	types := splitTypes(f.Types)
	if len(types) == 0 {
		types = []string{"*"}
	}
	// Patterns are checked here first so each error lands beside its own field: what
	// CreateEndpoint refuses after them is the URL (the SSRF rules, H4).
	for _, p := range types {
		if _, err := hub.CompilePattern(p); err != nil {
			f.TypesError = err.Error()
		}
	}
	var asked *string
	if f.Tenant != "" {
		asked = &f.Tenant
	}
	tenant, err := admin.OwnTenant(ctx, "tenant", asked)
	if err != nil {
		f.TenantError = err.Error()
	}
	if f.TypesError != "" || f.TenantError != "" {
		c.endpointsWith(w, r, http.StatusUnprocessableEntity, f, "")
		return
	}
	spec := webhook.EndpointSpec{URL: f.URL, Patterns: types, Description: f.Description}
	if tenant != nil {
		spec.TenantID = *tenant
	}
	e, err := t.CreateEndpoint(ctx, spec)
	object := ""
	if e != nil {
		object = "endpoint/" + e.ID
	}
	c.cfg.Admin.AuditAction(r, "endpoint.create", object, spec.TenantID, err)
	if err != nil {
		if hub.Code(err) != hub.InvalidArgument && hub.Code(err) != hub.PermissionDenied {
			c.fail(w, r, nil, err)
			return
		}
		f.URLError = err.Error()
		c.endpointsWith(w, r, http.StatusUnprocessableEntity, f, "")
		return
	}
	c.showEndpoint(w, r, e.ID, e.ViewWithSecret().Secret, "Endpoint registered. Copy its signing secret now: it is not shown again.")
}

type endpointData struct {
	E       webhook.EndpointView
	Secret  string // shown once, after create or rotate
	Breaker webhook.BreakerStatus
	History []webhook.BreakerTransition
	Recent  []*webhook.Delivery
	Types   string
}

func (c *Console) endpoint(w http.ResponseWriter, r *http.Request) {
	c.showEndpoint(w, r, r.PathValue("id"), "", "")
}

// ownedEndpoint reads an endpoint the viewer may see (another tenant's is NotFound).
func ownedEndpoint(r *http.Request, t *webhook.Transport, id string) (*webhook.Endpoint, error) {
	e, err := t.Endpoint(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if err := admin.CheckOwner(r.Context(), "webhook: endpoint", id, e.TenantID); err != nil {
		return nil, err
	}
	return e, nil
}

// endpointFor is the start of every handler on one endpoint: the webhook transport and
// the endpoint id, if the caller may see it. On false the error page is written.
func (c *Console) endpointFor(w http.ResponseWriter, r *http.Request, id string) (*webhook.Transport, *webhook.Endpoint, bool) {
	t, ok := c.wh(w, r)
	if !ok {
		return nil, nil, false
	}
	e, err := ownedEndpoint(r, t, id)
	if err != nil {
		c.fail(w, r, nil, err)
		return nil, nil, false
	}
	return t, e, true
}

func (c *Console) showEndpoint(w http.ResponseWriter, r *http.Request, id, secret, flash string) {
	t, e, ok := c.endpointFor(w, r, id)
	if !ok {
		return
	}
	ctx := r.Context()
	var err error
	d := endpointData{E: e.View(), Secret: secret, Types: strings.Join(e.Patterns, ", ")}
	if d.Breaker, err = t.Breaker(ctx, id); err != nil && hub.Code(err) != hub.NotFound {
		c.fail(w, r, nil, err)
		return
	}
	if d.History, err = t.BreakerHistory(ctx, id, 20); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	recent, err := t.DeliveryPage(ctx, webhook.DeliveryQuery{DeliveryFilter: webhook.DeliveryFilter{EndpointID: id, TenantID: admin.ScopedTenant(ctx)}, Limit: 10})
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	d.Recent = recent.Deliveries
	c.render(w, r, http.StatusOK, "endpoint", &page{Title: "Endpoint " + id, Nav: "endpoints", Flash: flash, Data: d})
}

// updateEndpoint changes types, description and the enabled flag.
func (c *Console) updateEndpoint(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	t, cur, ok := c.endpointFor(w, r, id)
	if !ok {
		return
	}
	types := splitTypes(r.PostFormValue("types"))
	desc := r.PostFormValue("description")
	enabled := r.PostFormValue("enabled") == "on"
	u := webhook.EndpointUpdate{Patterns: types, Description: &desc, Enabled: &enabled}
	if len(types) == 0 {
		u.Patterns = nil
	}
	_, err := t.UpdateEndpoint(r.Context(), id, u)
	c.cfg.Admin.AuditAction(r, "endpoint.update", "endpoint/"+id, cur.TenantID, err)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.redirect(w, r, "endpoints", id, "?", "done", "saved")
}

// rotateSecret adds a new signing secret and shows it once.
func (c *Console) rotateSecret(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	t, cur, ok := c.endpointFor(w, r, id)
	if !ok {
		return
	}
	opts := webhook.RotateOptions{Revoke: r.PostFormValue("revoke") == "on"}
	if g := strings.TrimSpace(r.PostFormValue("grace")); g != "" {
		d, err := time.ParseDuration(g)
		if err != nil {
			c.fail(w, r, nil, hub.Errorf(hub.InvalidArgument, "grace %q: a duration such as 24h", g))
			return
		}
		opts.Grace = d
	}
	e, err := t.RotateSecret(r.Context(), id, opts)
	c.cfg.Admin.AuditAction(r, "endpoint.rotate", "endpoint/"+id, cur.TenantID, err)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.showEndpoint(w, r, id, e.ViewWithSecret().Secret, "Secret rotated. Copy the new secret now: it is not shown again.")
}

// sendTest queues a test event to the endpoint.
func (c *Console) sendTest(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	t, cur, ok := c.endpointFor(w, r, id)
	if !ok {
		return
	}
	d, err := t.SendTest(r.Context(), id)
	c.cfg.Admin.AuditAction(r, "endpoint.test", "endpoint/"+id, cur.TenantID, err)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.redirect(w, r, "deliveries", itoa(d.ID), "?", "done", "test")
}

func (c *Console) deleteEndpoint(w http.ResponseWriter, r *http.Request) {
	t, ok := c.wh(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	cur, err := ownedEndpoint(r, t, id)
	if err == nil {
		err = t.DeleteEndpoint(r.Context(), id)
	}
	tenant := ""
	if cur != nil {
		tenant = cur.TenantID
	}
	c.cfg.Admin.AuditAction(r, "endpoint.delete", "endpoint/"+id, tenant, err)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.redirect(w, r, "endpoints", "?", "done", "deleted")
}

// redirect answers a successful action with 303 to a page of the same site (Post/
// Redirect/Get: a reload does not repeat the action).
func (c *Console) redirect(w http.ResponseWriter, r *http.Request, parts ...string) {
	pg := &page{}
	c.fill(r, pg)
	http.Redirect(w, r, pg.U(parts...), http.StatusSeeOther)
}
