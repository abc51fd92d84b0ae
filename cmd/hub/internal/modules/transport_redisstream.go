package modules

import (
	"context"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/redisstream"
)

func init() { registry.Register(new(RedisTransport)) }

// RedisTransport appends events to Redis streams as R2 field entries
// (transport.redisstream). Without url it reads KODER_REDIS_URL (R7).
type RedisTransport struct {
	// URL is redis:// or rediss://user:pass@host:port/db. Default $KODER_REDIS_URL.
	URL                string `yaml:"url"`
	redisstream.Config `yaml:",inline"`

	openStream
}

// HubModule registers transport.redisstream.
func (*RedisTransport) HubModule() registry.Info {
	return registry.Info{ID: "transport.redisstream", New: func() registry.Module { return new(RedisTransport) },
		Doc: "Redis Streams: R2 field entries, XADD MAXLEN ~, pipelined batches (url or KODER_REDIS_URL)"}
}

// Provision takes the URL from KODER_REDIS_URL when none is given and names metrics
// after the section.
func (m *RedisTransport) Provision(pc *registry.ProvisionContext) error {
	if m.URL == "" {
		m.URL = pc.Getenv(redisstream.EnvURL)
	}
	if m.Name == "" {
		m.Name = pc.Name
	}
	return nil
}

// Validate checks the URL (without connecting) and the library config.
func (m *RedisTransport) Validate() error {
	if m.URL == "" {
		return registry.Field("url", "required (or set %s)", redisstream.EnvURL)
	}
	_, cfg, err := redisstream.ParseClientURL(m.URL, m.Config)
	if err != nil {
		return registry.Field("url", "%v", err)
	}
	cfg.Naming = streams.DefaultNaming(cfg.Naming, cfg.Service)
	return cfg.Validate()
}

// Open connects (a down server is not an error: sends report Unavailable until it is up).
func (m *RedisTransport) Open(ctx context.Context, rt *registry.Runtime) (hub.Transport, error) {
	cfg := m.Config
	cfg.Logger, cfg.Metrics = rt.Logger, rt.StreamMetrics
	t, err := redisstream.OpenWith(ctx, m.URL, cfg)
	if err != nil {
		return nil, err
	}
	m.openStream = openStream{dlq: ops.DLQ{Redis: t.DLQ()}, status: t.Status}
	return t, nil
}

var (
	_ registry.TransportModule = (*RedisTransport)(nil)
	_ registry.Provisioner     = (*RedisTransport)(nil)
	_ registry.Validator       = (*RedisTransport)(nil)
	_ ops.DLQProvider          = (*RedisTransport)(nil)
	_ ops.StreamStatuser       = (*RedisTransport)(nil)
)
