package modules

import (
	"context"
	"errors"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/watermill/natsjs"
)

func init() { registry.Register(new(NATSTransport)) }

// envNATSURL is the URL NATS tools read when none is given.
const envNATSURL = "NATS_URL"

// NATSTransport publishes to a NATS JetStream stream through watermill-nats under the
// Watermill adapter (transport.nats), as the CloudEvents NATS binding. Its keys are
// natsjs.Config's; without url it reads NATS_URL.
type NATSTransport struct {
	natsjs.Config `yaml:",inline"`
}

// HubModule registers transport.nats.
func (*NATSTransport) HubModule() registry.Info {
	return registry.Info{ID: "transport.nats", New: func() registry.Module { return new(NATSTransport) },
		Doc: "NATS JetStream: <subject>.<type> in a stream, CloudEvents NATS binding, acknowledged publishes (url or NATS_URL)"}
}

// Provision reads NATS_URL when url is empty and names metrics after the section.
func (m *NATSTransport) Provision(pc *registry.ProvisionContext) error {
	provisionNATS(&m.Config, pc)
	return nil
}

// Validate runs the library's checks on a copy with its defaults, so lint agrees with New.
func (m *NATSTransport) Validate() error {
	c := m.WithDefaults()
	err := c.Validate()
	if m.Durable != "" {
		err = errors.Join(err, registry.Field("durable", "a transport publishes to the stream; consume it with a source of type nats"))
	}
	return err
}

// Open connects and creates the stream when missing.
func (m *NATSTransport) Open(ctx context.Context, rt *registry.Runtime) (hub.Transport, error) {
	cfg := m.Config
	cfg.Logger, cfg.Metrics = rt.Logger, rt.StreamMetrics
	return natsjs.New(ctx, cfg)
}

func provisionNATS(c *natsjs.Config, pc *registry.ProvisionContext) {
	if c.URL == "" {
		c.URL = pc.Getenv(envNATSURL)
	}
	if c.Name == "" {
		c.Name = pc.Name
	}
}

var (
	_ registry.TransportModule = (*NATSTransport)(nil)
	_ registry.Validator       = (*NATSTransport)(nil)
	_ registry.Provisioner     = (*NATSTransport)(nil)
)
