package webhook

import (
	"context"
	"time"
)

// Operator views: what an admin API or a console shows of the transport. They are
// plain values with JSON tags, computed from the database on each call.

// EndpointView is an endpoint as operators see it: secrets are never listed, only
// counted. The current secret appears once, in the view CreateEndpoint's and
// RotateSecret's callers return (ViewWithSecret), because the receiver needs it to
// verify signatures (H2).
type EndpointView struct {
	ID             string    `json:"id"`
	URL            string    `json:"url"`
	Types          []string  `json:"types"` // the endpoint's patterns
	Tenant         string    `json:"tenant,omitempty"`
	Enabled        bool      `json:"enabled"`
	DisabledReason string    `json:"disabled_reason,omitempty"`
	Description    string    `json:"description,omitempty"`
	Secrets        int       `json:"secrets"`          // signing secrets in use (two during a rotation)
	Secret         string    `json:"secret,omitempty"` // ViewWithSecret only
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	// Controls are the delivery controls, static header values redacted (they are
	// often credentials: Authorization, API keys); omitted when none is set.
	Controls *Controls `json:"controls,omitempty"`
	// Rate is the rate limiter's state, in the admin API's single-endpoint view.
	Rate *RateState `json:"rate,omitempty"`
}

// redactedHeader replaces static header values in views.
const redactedHeader = "[redacted]"

// View returns the endpoint without its secrets.
func (e *Endpoint) View() EndpointView {
	return EndpointView{ID: e.ID, URL: e.URL, Types: e.Patterns, Tenant: e.TenantID, Enabled: e.Enabled,
		DisabledReason: e.DisabledReason, Description: e.Description, Secrets: len(e.Secrets),
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, Controls: e.Controls.view()}
}

// view is c for an operator view: nil when nothing is set, header values redacted.
func (c Controls) view() *Controls {
	if c.Filter == "" && len(c.Headers) == 0 && c.Signature == (Signature{}) && c.RateLimit == (RateLimit{}) &&
		c.Ordering == (Ordering{}) && c.MaxQueued == 0 && c.Proxy == "" && c.TLS.isZero() {
		return nil
	}
	if c.TLS.ClientKey != "" {
		c.TLS.ClientKey = redactedHeader // never shown, like the signing secrets
	}
	if u, err := checkProxyURL(c.Proxy); err == nil {
		c.Proxy = redactURL(u) // proxy credentials are not shown either
	}
	if len(c.Headers) > 0 {
		h := make(map[string]string, len(c.Headers))
		for k := range c.Headers {
			h[k] = redactedHeader
		}
		c.Headers = h
	}
	return &c
}

// ViewWithSecret returns the view with the newest signing secret: the answer to a
// create or a rotation, the one time the secret is shown.
func (e *Endpoint) ViewWithSecret() EndpointView {
	v := e.View()
	if len(e.Secrets) > 0 {
		v.Secret = e.Secrets[0].Value
	}
	return v
}

// Page selects part of a listing ordered by id: the items after After ("" for the
// first), at most Limit of them (0 or less: every remaining one). Page on by passing
// the last id back as After.
type Page struct {
	After string
	Limit int
	// TenantID lists only the endpoints of this tenant ("" = every endpoint): the
	// filter a tenant-scoped caller's listing runs with, in the query itself.
	TenantID string
}

// ListEndpoints lists endpoints by id (= creation order), enabled or not, without
// their secrets. It reads every endpoint and pages in memory: a hub has few endpoints
// (Send reads all the enabled ones on every call).
func (t *Transport) ListEndpoints(ctx context.Context, p Page) ([]EndpointView, error) {
	eps, err := t.st.listEndpoints(ctx, endpointQuery{tenant: p.TenantID})
	if err != nil {
		return nil, err
	}
	out := []EndpointView{}
	for _, e := range eps {
		if e.ID <= p.After {
			continue
		}
		if p.Limit > 0 && len(out) == p.Limit {
			break
		}
		out = append(out, e.View())
	}
	return out, nil
}

// Status is the transport's state for operators: every endpoint's breaker (H3), as
// stored, so every replica reports the same.
type Status struct {
	Breakers []BreakerStatus `json:"breakers"`
}

// Status reads every endpoint's breaker.
func (t *Transport) Status(ctx context.Context) (Status, error) {
	bs, err := t.Breakers(ctx)
	return Status{Breakers: bs}, err
}
