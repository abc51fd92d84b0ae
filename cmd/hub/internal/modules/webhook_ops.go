package modules

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/webhook"
)

// endpointView is an endpoint as the admin API shows it: secrets are never listed, only
// returned once by create and rotate.
type endpointView struct {
	ID             string    `json:"id"`
	URL            string    `json:"url"`
	Types          []string  `json:"types"`
	Tenant         string    `json:"tenant,omitempty"`
	Enabled        bool      `json:"enabled"`
	DisabledReason string    `json:"disabled_reason,omitempty"`
	Description    string    `json:"description,omitempty"`
	Secrets        int       `json:"secrets"`
	Secret         string    `json:"secret,omitempty"` // create and rotate only
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

func viewOf(e *webhook.Endpoint, withSecret bool) endpointView {
	v := endpointView{ID: e.ID, URL: e.URL, Types: e.Patterns, Tenant: e.TenantID, Enabled: e.Enabled,
		DisabledReason: e.DisabledReason, Description: e.Description, Secrets: len(e.Secrets), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	if withSecret && len(e.Secrets) > 0 {
		v.Secret = e.Secrets[0].Value
	}
	return v
}

type webhookEndpoints struct{ t *webhook.Transport }

func (w webhookEndpoints) List(ctx context.Context) (any, error) {
	eps, err := w.t.Endpoints(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]endpointView, len(eps))
	for i, e := range eps {
		out[i] = viewOf(e, false)
	}
	return out, nil
}

func (w webhookEndpoints) Get(ctx context.Context, id string) (any, error) {
	e, err := w.t.Endpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	return viewOf(e, false), nil
}

type endpointBody struct {
	URL         *string  `json:"url"`
	Types       []string `json:"types"`
	Tenant      *string  `json:"tenant"`
	Secret      string   `json:"secret"`
	Description *string  `json:"description"`
	Enabled     *bool    `json:"enabled"`
}

func decodeStrict(body json.RawMessage, v any) error {
	dec := json.NewDecoder(bytesReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return hub.Errorf(hub.InvalidArgument, "body: %v", err)
	}
	return nil
}

func (w webhookEndpoints) Create(ctx context.Context, body json.RawMessage) (any, error) {
	var b endpointBody
	if err := decodeStrict(body, &b); err != nil {
		return nil, err
	}
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
	e, err := w.t.CreateEndpoint(ctx, spec)
	if err != nil {
		return nil, err
	}
	return viewOf(e, true), nil
}

func (w webhookEndpoints) Update(ctx context.Context, id string, body json.RawMessage) (any, error) {
	var b endpointBody
	if err := decodeStrict(body, &b); err != nil {
		return nil, err
	}
	if b.Secret != "" {
		return nil, hub.Errorf(hub.InvalidArgument, "secret: use POST /endpoints/{id}/rotate")
	}
	e, err := w.t.UpdateEndpoint(ctx, id, webhook.EndpointUpdate{URL: b.URL, Patterns: b.Types, TenantID: b.Tenant, Description: b.Description, Enabled: b.Enabled})
	if err != nil {
		return nil, err
	}
	return viewOf(e, false), nil
}

func (w webhookEndpoints) Delete(ctx context.Context, id string) error {
	return w.t.DeleteEndpoint(ctx, id)
}

func (w webhookEndpoints) Rotate(ctx context.Context, id string, body json.RawMessage) (any, error) {
	var b struct {
		Secret string `json:"secret"`
		Grace  string `json:"grace"`
		Revoke bool   `json:"revoke"`
	}
	if err := decodeStrict(body, &b); err != nil {
		return nil, err
	}
	opts := webhook.RotateOptions{Secret: b.Secret, Revoke: b.Revoke}
	if b.Grace != "" {
		d, err := time.ParseDuration(b.Grace)
		if err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "grace: %v", err)
		}
		opts.Grace = d
	}
	e, err := w.t.RotateSecret(ctx, id, opts)
	if err != nil {
		return nil, err
	}
	return viewOf(e, true), nil
}

type webhookDeliveries struct{ t *webhook.Transport }

func (w webhookDeliveries) List(ctx context.Context, q url.Values) (any, error) {
	f := webhook.DeliveryFilter{EndpointID: q.Get("endpoint"), EventID: q.Get("event"), State: webhook.DeliveryState(q.Get("status"))}
	var err error
	if f.Since, err = parseTime(q.Get("since")); err != nil {
		return nil, err
	}
	if f.Until, err = parseTime(q.Get("until")); err != nil {
		return nil, err
	}
	if l := q.Get("limit"); l != "" {
		f.Limit, _ = strconv.Atoi(l)
	}
	ds, err := w.t.Deliveries(ctx, f)
	if err != nil {
		return nil, err
	}
	if ds == nil {
		ds = []*webhook.Delivery{}
	}
	return ds, nil
}

func (w webhookDeliveries) Get(ctx context.Context, id string) (any, error) {
	n, err := parseID(id)
	if err != nil {
		return nil, err
	}
	return w.t.Delivery(ctx, n)
}

func (w webhookDeliveries) Resend(ctx context.Context, body json.RawMessage) (any, error) {
	var b struct {
		IDs      []string `json:"ids"`
		Endpoint string   `json:"endpoint"`
		Since    string   `json:"since"`
		Until    string   `json:"until"`
	}
	if err := decodeStrict(body, &b); err != nil {
		return nil, err
	}
	if len(b.IDs) > 0 {
		var out []*webhook.Delivery
		for _, id := range b.IDs {
			n, err := parseID(id)
			if err != nil {
				return nil, err
			}
			d, err := w.t.Resend(ctx, n)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		return map[string]any{"resent": len(out), "deliveries": out}, nil
	}
	f := webhook.ResendFilter{EndpointID: b.Endpoint}
	var err error
	if f.Since, err = parseTime(b.Since); err != nil {
		return nil, err
	}
	if f.Until, err = parseTime(b.Until); err != nil {
		return nil, err
	}
	n, err := w.t.ResendDead(ctx, f)
	return map[string]any{"resent": n}, err
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
