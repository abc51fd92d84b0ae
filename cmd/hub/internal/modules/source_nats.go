package modules

import (
	"context"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/transports/watermill/natsjs"
)

func init() { registry.Register(new(NATSSource)) }

// NATSSource reads a JetStream stream as a durable consumer and publishes every event
// into the hub (source.nats); an event is acked once Publish returned, redelivered
// after retry_delay when it failed, moved to the dead-letter subject after
// max_deliveries. Its keys are natsjs.Config's; durable is required.
type NATSSource struct {
	natsjs.Config `yaml:",inline"`
	c             *natsjs.Consumer
}

// HubModule registers source.nats.
func (*NATSSource) HubModule() registry.Info {
	return registry.Info{ID: "source.nats", New: func() registry.Module { return new(NATSSource) },
		Doc: "NATS JetStream durable consumer: each event is published into the hub, acked after Publish, dead-lettered after max_deliveries"}
}

// Provision reads NATS_URL when url is empty.
func (m *NATSSource) Provision(pc *registry.ProvisionContext) error {
	provisionNATS(&m.Config, pc)
	return nil
}

// Validate checks the consumer config (durable required) without connecting.
func (m *NATSSource) Validate() error {
	c := m.WithDefaults()
	return c.ValidateConsumer()
}

// Start connects, creates the streams and the durable when missing, and consumes.
func (m *NATSSource) Start(ctx context.Context, rt *registry.Runtime) error {
	cfg := m.Config
	cfg.Logger, cfg.Metrics = rt.Logger, rt.StreamMetrics
	if rt.Schemas != nil {
		cfg.Versions = rt.Schemas
	}
	c, err := natsjs.NewConsumer(ctx, cfg)
	if err != nil {
		return err
	}
	if err := c.Start(context.WithoutCancel(ctx), publishHandler(rt)); err != nil {
		_ = c.Close()
		return err
	}
	m.c = c
	return nil
}

// Close stops consuming and drains running handlers.
func (m *NATSSource) Close(context.Context) error {
	if m.c == nil {
		return nil
	}
	return m.c.Close()
}

var (
	_ registry.SourceModule = (*NATSSource)(nil)
	_ registry.Validator    = (*NATSSource)(nil)
	_ registry.Provisioner  = (*NATSSource)(nil)
)
