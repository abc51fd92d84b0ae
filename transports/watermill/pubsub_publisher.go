package watermill

import (
	"context"
	"errors"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// TransportOpener returns the transport that publishes to a Watermill topic. The
// Publisher calls it once per topic and keeps the result until Close.
type TransportOpener func(topic string) (hub.Transport, error)

// Publisher is a message.Publisher over hub transports: a hub transport offered to
// Watermill applications, with its wire format (the R2 fields on Redis, the AMQP
// binding on RabbitMQ) and its guarantees (Publish returns once the transport accepted
// every message durably).
//
// Each message becomes an event (MessageToEvent): a CloudEvents message as it is, any
// other with the configured source, type and tenant. Publish is safe for concurrent use;
// messages of one call go in one Send, in order.
type Publisher struct {
	open TransportOpener
	cfg  PubSubConfig

	mu     sync.Mutex
	byName map[string]hub.Transport
	closed bool
}

// NewPublisher returns a Publisher opening one transport per topic with open.
func NewPublisher(open TransportOpener, cfg PubSubConfig) *Publisher {
	cfg.setDefaults()
	return &Publisher{open: open, cfg: cfg, byName: map[string]hub.Transport{}}
}

func (p *Publisher) transport(topic string) (hub.Transport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, hub.Errorf(hub.FailedPrecondition, "watermill: Publish after Close")
	}
	if tr, ok := p.byName[topic]; ok {
		return tr, nil
	}
	tr, err := p.open(topic)
	if err != nil {
		return nil, err
	}
	p.byName[topic] = tr
	return tr, nil
}

// Publish sends the messages to topic's transport in one Send. The context of the
// first message bounds it (message.SetContext; Background by default).
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	tr, err := p.transport(topic)
	if err != nil {
		return err
	}
	evs := make([]*cloudevent.Event, len(msgs))
	for i, m := range msgs {
		if evs[i], err = MessageToEvent(m, p.cfg); err != nil {
			return err
		}
	}
	ctx := msgs[0].Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return tr.Send(ctx, evs)
}

// Close closes every transport it opened. Idempotent.
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var errs []error
	for _, tr := range p.byName {
		errs = append(errs, tr.Close())
	}
	return errors.Join(errs...)
}

var _ message.Publisher = (*Publisher)(nil)
