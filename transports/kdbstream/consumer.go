package kdbstream

import (
	"os"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	"github.com/koder/eventhub/transports/redisstream"
)

// ConsumerConfig configures a Consumer; it is the Redis transport's ConsumerConfig (the
// R4 loop's settings), so an application's consumer configuration carries over as is.
type ConsumerConfig = streams.Config

// Consumer reads one stream as a member of a consumer group (R4, hub.Consumer), with
// the same loop as the Redis transport (internal/streams): own pending entries first,
// then new ones in batches; handler; ack; failures claimed again after ClaimMinIdle;
// after MaxDeliveries the entry moves to the DLQ; malformed entries at once. Blocked
// reads wake on appends (in-process on SQLite, LISTEN/NOTIFY on PostgreSQL). Close
// leaves the engine open.
type Consumer struct {
	*streams.Consumer
}

// NewConsumer validates cfg (R3 group naming, reserved stream prefix) and returns a
// Consumer over eng. It does no I/O: Start creates the group.
func NewConsumer(eng *engine.Engine, cfg ConsumerConfig) (*Consumer, error) {
	if eng == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "kdbstream: nil engine")
	}
	if err := redisstream.ValidateGroup(cfg.Group); err != nil {
		return nil, err
	}
	if err := redisstream.ValidateStream(cfg.Stream); err != nil {
		return nil, err
	}
	if cfg.DLQStream == "" {
		cfg.DLQStream = redisstream.DLQStreamFor(cfg.Stream)
	}
	if cfg.Consumer == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			return nil, hub.Errorf(hub.InvalidArgument, "kdbstream: ConsumerConfig.Consumer is required (no host name to default to)")
		}
		cfg.Consumer = host
	}
	if cfg.Transport == "" {
		cfg.Transport = DefaultName
	}
	c, err := streams.New(eng, cfg)
	if err != nil {
		return nil, err
	}
	return &Consumer{Consumer: c}, nil
}

// NewConsumer returns a Consumer sharing the transport's engine.
func (t *Transport) NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	return NewConsumer(t.eng, cfg)
}

var _ hub.Consumer = (*Consumer)(nil)
