package streams

import (
	"os"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// ForTransport is New with the rules a stream transport puts on its consumers, the
// same on both buses: the stream must respect the reserved prefix and the group R3's
// "<service>-<purpose>"; the dead-letter stream defaults to streams.DLQStreamFor(Stream)
// (so "events.dlq" for per-category streams, E8), the consumer name to the host name,
// and the metrics label to transport (which also prefixes the host-name error).
func ForTransport(transport string, b Backend, cfg streams.ConsumerConfig) (*Consumer, error) {
	if err := streams.ValidateGroup(cfg.Group); err != nil {
		return nil, err
	}
	if err := streams.ValidateStream(cfg.Stream); err != nil {
		return nil, err
	}
	if cfg.DLQStream == "" {
		cfg.DLQStream = streams.DLQStreamFor(cfg.Stream)
	}
	if cfg.Consumer == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			return nil, hub.Errorf(hub.InvalidArgument, "%s: ConsumerConfig.Consumer is required (no host name to default to)", transport)
		}
		cfg.Consumer = host
	}
	if cfg.Transport == "" {
		cfg.Transport = transport
	}
	return New(b, cfg)
}
