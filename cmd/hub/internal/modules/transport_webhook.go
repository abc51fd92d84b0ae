package modules

import (
	"context"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/cmd/hub/internal/store"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/webhook"
)

func init() { registry.Register(new(WebhookTransport)) }

// WebhookTransport fans events out to registered endpoints as signed, retried
// deliveries in the River ledger on the config's store (transport.webhook). Endpoints
// are managed through the admin API (/endpoints) or `hub endpoints`.
type WebhookTransport struct {
	webhook.Config `yaml:",inline"`
	t              *webhook.Transport
}

// HubModule registers transport.webhook.
func (*WebhookTransport) HubModule() registry.Info {
	return registry.Info{ID: "transport.webhook", New: func() registry.Module { return new(WebhookTransport) },
		Doc: "signed webhooks: one delivery per matching endpoint, retries, breaker, SSRF guard (needs a store)"}
}

// Singleton: the delivery worker is registered once per ledger, and a process has one
// ledger (its store's). One transport serves every route: endpoints choose their types.
func (*WebhookTransport) Singleton() string {
	return "route more patterns to the first; endpoints choose their types"
}

// Provision names metrics after the section and checks that a store exists.
func (m *WebhookTransport) Provision(pc *registry.ProvisionContext) error {
	if m.Name == "" {
		m.Name = pc.Name
	}
	if !pc.Store.Configured() {
		return store.ErrNone
	}
	return nil
}

// Validate runs the library's checks on the configuration New would use (its defaults
// applied to a copy by WithDefaults), so lint agrees with New.
func (m *WebhookTransport) Validate() error {
	c := m.WithDefaults()
	return c.Validate()
}

// Open builds the transport on the store's ledger, registering its worker and queue;
// the app starts the ledger once every module is open. Signing secrets are encrypted
// with the store's key ring when one is configured.
func (m *WebhookTransport) Open(ctx context.Context, rt *registry.Runtime) (hub.Transport, error) {
	l, err := rt.Ledger(ctx)
	if err != nil {
		return nil, err
	}
	ring, err := rt.Keyring()
	if err != nil {
		return nil, err
	}
	cfg := m.Config
	cfg.Registerer, cfg.Logger, cfg.Keyring = rt.Registry, rt.Logger, ring
	t, err := webhook.New(ctx, cfg, l)
	if err != nil {
		return nil, err
	}
	m.t = t
	return t, nil
}

// Webhook exposes endpoints, deliveries and breakers to the admin API.
func (m *WebhookTransport) Webhook() *webhook.Transport { return m.t }

var (
	_ registry.TransportModule = (*WebhookTransport)(nil)
	_ registry.Provisioner     = (*WebhookTransport)(nil)
	_ registry.Validator       = (*WebhookTransport)(nil)
	_ registry.Singleton       = (*WebhookTransport)(nil)
	_ ops.WebhookProvider      = (*WebhookTransport)(nil)
)
