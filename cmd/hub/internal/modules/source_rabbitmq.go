package modules

import (
	"context"
	"errors"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/transports/rabbitmq"
)

func init() { registry.Register(new(RabbitSource)) }

// RabbitSource consumes a RabbitMQ queue (a consumer group bound with hub patterns) and
// publishes every event into the hub (source.rabbitmq); the message is acked once
// Publish returned. Its keys are rabbitmq.Config's; queue is required.
type RabbitSource struct {
	rabbitmq.Config `yaml:",inline"`
	c               *rabbitmq.Consumer
}

// HubModule registers source.rabbitmq.
func (*RabbitSource) HubModule() registry.Info {
	return registry.Info{ID: "source.rabbitmq", New: func() registry.Module { return new(RabbitSource) },
		Doc: "RabbitMQ queue consumer: each event is published into the hub, acked after Publish"}
}

// Validate checks the consumer config.
func (m *RabbitSource) Validate() error {
	err := validateRabbit(m.Config)
	if m.Queue == "" {
		err = errors.Join(err, registry.Field("queue", "required"))
	}
	return err
}

// Start connects, declares the queue and consumes.
func (m *RabbitSource) Start(ctx context.Context, rt *registry.Runtime) error {
	cfg := m.Config
	cfg.Logger, cfg.Metrics = rt.Logger, rt.StreamMetrics
	if rt.Schemas != nil {
		cfg.Versions = rt.Schemas
	}
	c, err := rabbitmq.NewConsumer(ctx, cfg)
	if err != nil {
		return err
	}
	if err := c.Start(context.WithoutCancel(ctx), publishHandler(rt)); err != nil {
		c.Close()
		return err
	}
	m.c = c
	return nil
}

// Close stops consuming and drains running handlers.
func (m *RabbitSource) Close(ctx context.Context) error {
	if m.c == nil {
		return nil
	}
	return m.c.Close()
}

// DLQ exposes the group's dead-letter queue to the admin API.
func (m *RabbitSource) DLQ() ops.DLQ {
	cfg := m.Config
	return ops.DLQ{Rabbit: &cfg}
}

var (
	_ registry.SourceModule = (*RabbitSource)(nil)
	_ registry.Validator    = (*RabbitSource)(nil)
	_ ops.DLQProvider       = (*RabbitSource)(nil)
)
