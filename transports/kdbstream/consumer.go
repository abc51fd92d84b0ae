package kdbstream

import (
	"github.com/koder/eventhub/hub"
	streamloop "github.com/koder/eventhub/internal/streams"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// Consumer reads one stream as a member of a consumer group (R4, hub.Consumer), with
// the same loop as the Redis transport (internal/streams): own pending entries first,
// then new ones in batches; handler; ack; failures claimed again after ClaimMinIdle;
// after MaxDeliveries the entry moves to the DLQ; malformed entries at once. Blocked
// reads wake on appends (in-process on SQLite, LISTEN/NOTIFY on PostgreSQL). Close
// leaves the engine open.
type Consumer struct {
	*streamloop.Consumer
}

// NewConsumer validates cfg (R3 group naming, reserved stream prefix) and returns a
// Consumer over eng. It does no I/O: Start creates the group. cfg is the configuration
// the Redis transport's NewConsumer takes, so an application's consumer configuration
// carries over to kdbstream as is.
func NewConsumer(eng *engine.Engine, cfg streams.ConsumerConfig) (*Consumer, error) {
	if eng == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "kdbstream: nil engine")
	}
	c, err := streamloop.ForTransport(DefaultName, eng, cfg)
	if err != nil {
		return nil, err
	}
	return &Consumer{Consumer: c}, nil
}

// NewConsumer returns a Consumer sharing the transport's engine.
func (t *Transport) NewConsumer(cfg streams.ConsumerConfig) (*Consumer, error) {
	return NewConsumer(t.eng, cfg)
}

var _ hub.Consumer = (*Consumer)(nil)
