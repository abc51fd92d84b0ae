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

func (s *Server) webhookRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /endpoints", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		v, err := t.ListEndpoints(r.Context(), webhook.Page{After: r.URL.Query().Get("after"), Limit: intParam(r, "limit", 0)})
		reply(w, v, err)
	}))
	mux.HandleFunc("POST /endpoints", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		var b endpointBody
		if !decodeBody(w, r, &b) {
			return
		}
		e, err := t.CreateEndpoint(r.Context(), b.spec())
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, e.ViewWithSecret())
	}))
	mux.HandleFunc("GET /endpoints/{id}", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		e, err := t.Endpoint(r.Context(), r.PathValue("id"))
		replyView(w, e, err, false)
	}))
	mux.HandleFunc("PATCH /endpoints/{id}", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		var b endpointBody
		if !decodeBody(w, r, &b) {
			return
		}
		if b.Secret != "" {
			writeErr(w, hub.Errorf(hub.InvalidArgument, "secret: use POST /endpoints/{id}/rotate"))
			return
		}
		e, err := t.UpdateEndpoint(r.Context(), r.PathValue("id"),
			webhook.EndpointUpdate{URL: b.URL, Patterns: b.Types, TenantID: b.Tenant, Description: b.Description, Enabled: b.Enabled})
		replyView(w, e, err, false)
	}))
	mux.HandleFunc("DELETE /endpoints/{id}", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		if err := t.DeleteEndpoint(r.Context(), r.PathValue("id")); err != nil {
			writeErr(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	mux.HandleFunc("POST /endpoints/{id}/rotate", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		var b rotateBody
		if !decodeBody(w, r, &b) {
			return
		}
		opts := webhook.RotateOptions{Secret: b.Secret, Revoke: b.Revoke}
		if b.Grace != "" {
			d, err := time.ParseDuration(b.Grace)
			if err != nil {
				writeErr(w, hub.Errorf(hub.InvalidArgument, "grace: %v", err))
				return
			}
			opts.Grace = d
		}
		e, err := t.RotateSecret(r.Context(), r.PathValue("id"), opts)
		replyView(w, e, err, true)
	}))
	mux.HandleFunc("GET /deliveries", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		f, err := deliveryFilter(r.URL.Query())
		if err != nil {
			writeErr(w, err)
			return
		}
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
		d, err := t.Delivery(r.Context(), id)
		reply(w, d, err)
	}))
	mux.HandleFunc("POST /deliveries/resend", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		var b resendBody
		if !decodeBody(w, r, &b) {
			return
		}
		v, err := resend(r, t, b)
		reply(w, v, err)
	}))
}

// resend delivers again the deliveries named, or every dead one of an endpoint in a
// time range.
func resend(r *http.Request, t *webhook.Transport, b resendBody) (resentReply, error) {
	if len(b.IDs) > 0 {
		var out []*webhook.Delivery
		for _, id := range b.IDs {
			d, err := t.Resend(r.Context(), int64(id))
			if err != nil {
				return resentReply{}, err
			}
			out = append(out, d)
		}
		return resentReply{Deliveries: out, Resent: len(out)}, nil
	}
	f := webhook.ResendFilter{EndpointID: b.Endpoint}
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
