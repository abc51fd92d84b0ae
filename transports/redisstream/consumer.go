package redisstream

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	streamloop "github.com/koder/eventhub/internal/streams"
	"github.com/koder/eventhub/streams"
)

// Consumer reads one stream as a member of a consumer group (R4, hub.Consumer): own
// pending entries first, then new ones in batches of 100; handler; one XACK per batch;
// failures stay pending and are claimed again after ClaimMinIdle; after MaxDeliveries
// the entry moves to the DLQ with its error; malformed entries and unknown MAJOR
// versions go there at once. The loop itself lives in internal/streams, shared with
// kdbstream. Close leaves the client open.
type Consumer struct {
	*streamloop.Consumer
	backend *Backend
	client  redis.UniversalClient
	once    sync.Once
}

// NewConsumer validates cfg (the group must follow R3's <service>-<purpose>) and returns
// a Consumer over client. It does no I/O: Start creates the group. cfg is the
// configuration kdbstream's NewConsumer takes too; its defaults are the streams
// package's Default* constants, the DLQ defaults to DLQStreamFor(client, Stream) (on
// Redis Cluster a name in the stream's hash slot, which a DLQStream given explicitly
// must share too) and Consumer to the host name.
func NewConsumer(client redis.UniversalClient, cfg streams.ConsumerConfig) (*Consumer, error) {
	if client == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "redisstream: nil client")
	}
	if IsCluster(client) && cfg.DLQStream == "" && cfg.Stream != "" {
		cfg.DLQStream = ClusterDLQStreamFor(cfg.Stream)
	}
	if err := checkSameSlot(client, cfg.Stream, cfg.DLQStream); err != nil {
		return nil, err
	}
	b := NewBackend(client)
	c, err := streamloop.ForTransport(DefaultName, b, cfg)
	if err != nil {
		return nil, err
	}
	return &Consumer{Consumer: c, backend: b, client: client}, nil
}

// NewConsumer returns a Consumer sharing the transport's client.
func (t *Transport) NewConsumer(cfg streams.ConsumerConfig) (*Consumer, error) {
	return NewConsumer(t.client, cfg)
}

// Start warns once if the server keeps nothing on disk (E6), creates the group and
// starts consuming in the background.
func (c *Consumer) Start(ctx context.Context, h hub.Handler) error {
	c.once.Do(func() { WarnIfVolatile(ctx, c.client, c.Config().Logger) })
	return c.Consumer.Start(ctx, h)
}

// Close stops the consumer (see internal/streams' Consumer.Close) and releases its
// dedicated read connections.
func (c *Consumer) Close() error {
	err := c.Consumer.Close()
	c.backend.closeBlockers()
	return err
}

var _ hub.Consumer = (*Consumer)(nil)
