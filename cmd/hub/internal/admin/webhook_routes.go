package admin

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/webhook"
)

// webhook returns the webhook transport (the first; a hub runs at most one).
func (s *Server) webhook(w http.ResponseWriter) (*webhook.Transport, bool) {
	for _, t := range s.Transports {
		if p, ok := t.Module.(ops.WebhookProvider); ok && p.Webhook() != nil {
			return p.Webhook(), true
		}
	}
	writeError(w, http.StatusNotFound, "no webhook transport is configured")
	return nil, false
}

// wh wraps a route that needs the webhook transport.
func (s *Server) wh(f func(t *webhook.Transport, w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if t, ok := s.webhook(w); ok {
			f(t, w, r)
		}
	}
}

// endpointBody is POST /endpoints and PATCH /endpoints/{id}: every field optional.
type endpointBody struct {
	URL         *string  `json:"url"`
	Types       []string `json:"types"`
	Tenant      *string  `json:"tenant"`
	Secret      string   `json:"secret"`
	Description *string  `json:"description"`
	Enabled     *bool    `json:"enabled"`
	// Controls: filter, headers, signature, rate_limit, ordering, max_queued, max_in_flight
	// (endpoint_controls.go); a bad one is a 400 naming the field (a filter's with its
	// line:col).
	Controls *controlsBody `json:"controls"`
}

// spec is the endpoint a POST registers: every event ("*") unless types say otherwise.
func (b endpointBody) spec() webhook.EndpointSpec {
	spec := webhook.EndpointSpec{Patterns: b.Types, Secret: b.Secret}
	if b.URL != nil {
		spec.URL = *b.URL
	}
	if b.Tenant != nil {
		spec.TenantID = *b.Tenant
	}
	if b.Description != nil {
		spec.Description = *b.Description
	}
	if b.Enabled != nil && !*b.Enabled {
		spec.Disabled = true
	}
	if len(spec.Patterns) == 0 {
		spec.Patterns = []string{"*"}
	}
	spec.Controls = b.Controls.merge(webhook.Controls{})
	return spec
}

type rotateBody struct {
	Secret string `json:"secret"`
	Grace  string `json:"grace"`
	Revoke bool   `json:"revoke"`
}

type resendBody struct {
	IDs      []deliveryID `json:"ids"` // as GET /deliveries lists them
	Endpoint string       `json:"endpoint"`
	Since    string       `json:"since"`
	Until    string       `json:"until"`
}

// resentReply answers the resend routes; its fields are in name order, the order this
// JSON has always had.
type resentReply struct {
	Deliveries []*webhook.Delivery `json:"deliveries,omitempty"` // resend by ids only
	Resent     int                 `json:"resent"`
}

// Every webhook route is scoped by the caller's tenant: listings filter in the
// library's query (webhook.Page.TenantID, DeliveryFilter.TenantID), single objects are
// checked after the read (another tenant's is 404), and a tenant-scoped caller creates
// and moves endpoints within its own tenant only.
func (s *Server) webhookRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /endpoints", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		v, err := t.ListEndpoints(r.Context(), webhook.Page{After: r.URL.Query().Get("after"), Limit: intParam(r, "limit", 0), TenantID: scopedTenant(r.Context())})
		reply(w, v, err)
	}))
	mux.HandleFunc("POST /endpoints", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		var b endpointBody
		if !decodeBody(w, r, &b) {
			return
		}
		var err error
		if b.Tenant, err = ownTenant(r.Context(), "tenant", b.Tenant); err != nil {
			s.done(w, r, "endpoint.create", "", "", 0, nil, err)
			return
		}
		e, err := t.CreateEndpoint(r.Context(), b.spec())
		if err != nil {
			s.done(w, r, "endpoint.create", "", b.spec().TenantID, 0, nil, err)
			return
		}
		s.done(w, r, "endpoint.create", "endpoint/"+e.ID, e.TenantID, http.StatusCreated, e.ViewWithSecret(), nil)
	}))
	mux.HandleFunc("GET /endpoints/{id}", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		e, err := s.ownedEndpoint(r, t)
		if err != nil || e.Controls.RateLimit.RPS <= 0 {
			replyView(w, e, err, false)
			return
		}
		v := e.View()
		rs, err := t.RateState(r.Context(), e.ID)
		v.Rate = &rs
		reply(w, v, err)
	}))
	mux.HandleFunc("PATCH /endpoints/{id}", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		var b endpointBody
		if !decodeBody(w, r, &b) {
			return
		}
		id := r.PathValue("id")
		if b.Secret != "" {
			writeErr(w, hub.Errorf(hub.InvalidArgument, "secret: use POST /endpoints/{id}/rotate"))
			return
		}
		cur, err := s.ownedEndpoint(r, t)
		if err == nil && b.Tenant != nil {
			b.Tenant, err = ownTenant(r.Context(), "tenant", b.Tenant)
		}
		if err != nil {
			s.done(w, r, "endpoint.update", "endpoint/"+id, tenantOf(cur), 0, nil, err)
			return
		}
		u := webhook.EndpointUpdate{URL: b.URL, Patterns: b.Types, TenantID: b.Tenant, Description: b.Description, Enabled: b.Enabled}
		if b.Controls != nil {
			c := b.Controls.merge(cur.Controls)
			u.Controls = &c
		}
		e, err := t.UpdateEndpoint(r.Context(), id, u)
		var v any
		if err == nil {
			v = e.View()
		}
		s.done(w, r, "endpoint.update", "endpoint/"+id, cur.TenantID, http.StatusOK, v, err)
	}))
	mux.HandleFunc("DELETE /endpoints/{id}", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		cur, err := s.ownedEndpoint(r, t)
		if err == nil {
			err = t.DeleteEndpoint(r.Context(), id)
		}
		s.done(w, r, "endpoint.delete", "endpoint/"+id, tenantOf(cur), http.StatusNoContent, nil, err)
	}))
	mux.HandleFunc("POST /endpoints/{id}/rotate", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		var b rotateBody
		if !decodeBody(w, r, &b) {
			return
		}
		id := r.PathValue("id")
		opts := webhook.RotateOptions{Secret: b.Secret, Revoke: b.Revoke}
		if b.Grace != "" {
			d, err := time.ParseDuration(b.Grace)
			if err != nil {
				writeErr(w, hub.Errorf(hub.InvalidArgument, "grace: %v", err))
				return
			}
			opts.Grace = d
		}
		cur, err := s.ownedEndpoint(r, t)
		var e *webhook.Endpoint
		if err == nil {
			e, err = t.RotateSecret(r.Context(), id, opts)
		}
		var v any
		if err == nil {
			v = e.ViewWithSecret()
		}
		s.done(w, r, "endpoint.rotate", "endpoint/"+id, tenantOf(cur), http.StatusOK, v, err)
	}))
	mux.HandleFunc("GET /deliveries", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		f, err := deliveryFilter(r.URL.Query())
		if err != nil {
			writeErr(w, err)
			return
		}
		f.TenantID = scopedTenant(r.Context())
		ds, err := t.Deliveries(r.Context(), f)
		if ds == nil {
			ds = []*webhook.Delivery{}
		}
		reply(w, ds, err)
	}))
	mux.HandleFunc("GET /deliveries/{id}", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		id, err := parseID(r.PathValue("id"))
		if err != nil {
			writeErr(w, err)
			return
		}
		d, err := ownedDelivery(r, t, id)
		reply(w, d, err)
	}))
	mux.HandleFunc("POST /deliveries/resend", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		var b resendBody
		if !decodeBody(w, r, &b) {
			return
		}
		v, err := resend(r, t, b)
		object := "deliveries/" + joinIDs(b.IDs)
		if len(b.IDs) == 0 {
			object = "deliveries/dead"
			if b.Endpoint != "" {
				object = "endpoint/" + b.Endpoint
			}
		}
		s.done(w, r, "delivery.resend", object, scopedTenant(r.Context()), http.StatusOK, v, err)
	}))
}

// ownedEndpoint reads the endpoint of the path's id if the caller may see it.
func (s *Server) ownedEndpoint(r *http.Request, t *webhook.Transport) (*webhook.Endpoint, error) {
	id := r.PathValue("id")
	e, err := t.Endpoint(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if err := checkOwner(r.Context(), "webhook: endpoint", id, e.TenantID); err != nil {
		return nil, err
	}
	return e, nil
}

// ownedDelivery reads a delivery if the caller may see it.
func ownedDelivery(r *http.Request, t *webhook.Transport, id int64) (*webhook.Delivery, error) {
	d, err := t.Delivery(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if err := checkOwner(r.Context(), "webhook: delivery", strconv.FormatInt(id, 10), d.TenantID); err != nil {
		return nil, err
	}
	return d, nil
}

func tenantOf(e *webhook.Endpoint) string {
	if e == nil {
		return ""
	}
	return e.TenantID
}

// resend delivers again the deliveries named (each checked against the caller's
// tenant first), or every dead one of an endpoint in a time range (of the caller's
// tenant).
func resend(r *http.Request, t *webhook.Transport, b resendBody) (resentReply, error) {
	if len(b.IDs) > 0 {
		var out []*webhook.Delivery
		for _, did := range b.IDs {
			id := int64(did)
			if _, err := ownedDelivery(r, t, id); err != nil {
				return resentReply{}, err
			}
			d, err := t.Resend(r.Context(), id)
			if err != nil {
				return resentReply{}, err
			}
			out = append(out, d)
		}
		return resentReply{Deliveries: out, Resent: len(out)}, nil
	}
	f := webhook.ResendFilter{EndpointID: b.Endpoint, TenantID: scopedTenant(r.Context())}
	var err error
	if f.Since, err = parseTime(b.Since); err != nil {
		return resentReply{}, err
	}
	if f.Until, err = parseTime(b.Until); err != nil {
		return resentReply{}, err
	}
	n, err := t.ResendDead(r.Context(), f)
	return resentReply{Resent: n}, err
}

// deliveryFilter reads GET /deliveries' query.
func deliveryFilter(q url.Values) (webhook.DeliveryFilter, error) {
	f := webhook.DeliveryFilter{EndpointID: q.Get("endpoint"), EventID: q.Get("event"), State: webhook.DeliveryState(q.Get("status"))}
	var err error
	if f.Since, err = parseTime(q.Get("since")); err != nil {
		return f, err
	}
	if f.Until, err = parseTime(q.Get("until")); err != nil {
		return f, err
	}
	if l := q.Get("limit"); l != "" {
		f.Limit, _ = strconv.Atoi(l)
	}
	return f, nil
}

// replyView answers with an endpoint's view, with its newest secret after a rotation.
func replyView(w http.ResponseWriter, e *webhook.Endpoint, err error, withSecret bool) {
	if err != nil {
		writeErr(w, err)
		return
	}
	v := e.View()
	if withSecret {
		v = e.ViewWithSecret()
	}
	writeJSON(w, http.StatusOK, v)
}

// decodeBody reads a JSON body strictly (an unknown field is a 400).
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	raw, err := readBody(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeErr(w, hub.Errorf(hub.InvalidArgument, "body: %v", err))
		return false
	}
	return true
}

func parseID(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, hub.Errorf(hub.InvalidArgument, "id %q: want a number", s)
	}
	return n, nil
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, hub.Errorf(hub.InvalidArgument, "time %q: want RFC 3339", s)
	}
	return t, nil
}
