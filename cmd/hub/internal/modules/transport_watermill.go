package modules

import (
	"context"
	"errors"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/watermill"
)

func init() { registry.Register(new(WatermillTransport)) }

// WatermillTransport publishes through a Watermill Pub/Sub under the adapter
// (transport.watermill): pubsub amqp (watermill-amqp) or redisstream
// (watermill-redisstream). Its other keys are watermill.Config's (topic, mode,
// max_batch, name).
type WatermillTransport struct {
	watermillPubSub  `yaml:",inline"`
	watermill.Config `yaml:",inline"`
}

// HubModule registers transport.watermill.
func (*WatermillTransport) HubModule() registry.Info {
	return registry.Info{ID: "transport.watermill", New: func() registry.Module { return new(WatermillTransport) },
		Doc: "any Watermill Pub/Sub under the adapter: pubsub amqp (watermill-amqp) or redisstream (watermill-redisstream)"}
}

// Provision names metrics after the section.
func (m *WatermillTransport) Provision(pc *registry.ProvisionContext) error {
	if m.Name == "" {
		m.Name = pc.Name
	}
	return nil
}

// Validate checks the pubsub, the URL and the adapter config without connecting.
func (m *WatermillTransport) Validate() error {
	errs := m.validate()
	c := m.WithDefaults()
	errs = append(errs, c.Validate())
	return errors.Join(errs...)
}

// Open builds the publisher (at the first send with connect_in_background).
func (m *WatermillTransport) Open(ctx context.Context, rt *registry.Runtime) (hub.Transport, error) {
	pub := watermill.LazyPublisher(m.publisher)
	if !m.ConnectInBackground {
		p, err := m.publisher()
		if err != nil {
			return nil, hub.Wrap(watermill.DefaultErrorCode(err), err)
		}
		pub = p
	}
	cfg := m.Config
	cfg.ClosePublisher = true
	// watermill-redisstream publishes with the message's context, which Send sets to
	// its own, and go-redis returns when it ends: called inline. watermill-amqp waits
	// for a broker's flow control and for its confirms without one (as long as the
	// alarm lasts), so Send guards it with the hand-over.
	cfg.GuardPublish = m.PubSub == pubsubAMQP
	cfg.Logger, cfg.Metrics = rt.Logger, rt.StreamMetrics
	tr, err := watermill.NewTransport(pub, cfg)
	if err != nil {
		_ = pub.Close()
		return nil, err
	}
	return tr, nil
}

var (
	_ registry.TransportModule = (*WatermillTransport)(nil)
	_ registry.Validator       = (*WatermillTransport)(nil)
	_ registry.Provisioner     = (*WatermillTransport)(nil)
)
