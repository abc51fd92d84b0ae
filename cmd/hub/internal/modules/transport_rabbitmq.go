package modules

import (
	"context"
	"errors"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/rabbitmq"
)

func init() { registry.Register(new(RabbitTransport)) }

// RabbitTransport publishes to a durable topic exchange with publisher confirms
// (transport.rabbitmq). Its keys are rabbitmq.Config's.
type RabbitTransport struct {
	rabbitmq.Config `yaml:",inline"`
}

// HubModule registers transport.rabbitmq.
func (*RabbitTransport) HubModule() registry.Info {
	return registry.Info{ID: "transport.rabbitmq", New: func() registry.Module { return new(RabbitTransport) },
		Doc: "RabbitMQ: durable topic exchange, persistent messages, publisher confirms (CloudEvents AMQP binding)"}
}

// Validate runs the library's checks on a copy with its defaults, so lint agrees with New.
func (m *RabbitTransport) Validate() error {
	err := validateRabbit(m.Config)
	if m.Queue != "" {
		// The transport publishes to the exchange; queues belong to consumers.
		err = errors.Join(err, registry.Field("queue", "a transport publishes to the exchange; consume a queue with a source of type rabbitmq"))
	}
	return err
}

// Open connects and declares the exchange.
func (m *RabbitTransport) Open(ctx context.Context, rt *registry.Runtime) (hub.Transport, error) {
	cfg := m.Config
	cfg.Logger, cfg.Metrics = rt.Logger, rt.StreamMetrics
	return rabbitmq.New(ctx, cfg)
}

// validateRabbit validates the configuration the library would use (its defaults
// applied to a copy by WithDefaults), without connecting.
func validateRabbit(c rabbitmq.Config) error {
	c = c.WithDefaults()
	return c.Validate()
}

var (
	_ registry.TransportModule = (*RabbitTransport)(nil)
	_ registry.Validator       = (*RabbitTransport)(nil)
)
