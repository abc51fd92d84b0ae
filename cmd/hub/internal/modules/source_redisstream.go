package modules

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/redisstream"
)

func init() { registry.Register(new(RedisSource)) }

// RedisSource reads a Redis stream as a consumer group (R4) and publishes every event
// into the hub (source.redisstream); an entry is acked once Publish returned, retried by
// claim, dead-lettered after max_deliveries. Without url it reads KODER_REDIS_URL.
type RedisSource struct {
	// URL is redis:// or rediss://. Default $KODER_REDIS_URL.
	URL string `yaml:"url"`
	// Idempotency skips events this group already processed (R5, Redis SET NX with
	// idempotency_ttl). Default true.
	Idempotency *bool `yaml:"idempotency"`

	streams.ConsumerConfig `yaml:",inline"`

	client redis.UniversalClient
	c      *redisstream.Consumer
}

// HubModule registers source.redisstream.
func (*RedisSource) HubModule() registry.Info {
	return registry.Info{ID: "source.redisstream", New: func() registry.Module { return new(RedisSource) },
		Doc: "Redis stream consumer group: each event is published into the hub, XACKed after Publish"}
}

// Provision reads KODER_REDIS_URL when url is empty.
func (m *RedisSource) Provision(pc *registry.ProvisionContext) error {
	if m.URL == "" {
		m.URL = pc.Getenv(redisstream.EnvURL)
	}
	provisionStreamSource(&m.ConsumerConfig)
	return nil
}

// Validate checks the URL, stream and group names (R3) without connecting.
func (m *RedisSource) Validate() error {
	var errs []error
	if m.URL == "" {
		errs = append(errs, registry.Field("url", "required (or set %s)", redisstream.EnvURL))
	} else if _, _, err := redisstream.ParseClientURL(m.URL, redisstream.Config{}); err != nil {
		errs = append(errs, registry.Field("url", "%v", err))
	}
	return errors.Join(append(errs, validateStreamSource(m.ConsumerConfig))...)
}

// Start connects and consumes in the background.
func (m *RedisSource) Start(ctx context.Context, rt *registry.Runtime) error {
	opts, _, err := redisstream.ParseClientURL(m.URL, redisstream.Config{})
	if err != nil {
		return err
	}
	m.client = opts.NewClient()
	cfg := streamSourceConfig(m.ConsumerConfig, rt)
	if m.Idempotency == nil || *m.Idempotency {
		cfg.Idempotency = redisstream.NewIdempotencyStore(m.client, "")
	}
	c, err := redisstream.NewConsumer(m.client, cfg)
	if err == nil {
		err = c.Start(context.WithoutCancel(ctx), publishHandler(rt))
	}
	if err != nil {
		m.client.Close()
		return err
	}
	m.c = c
	return nil
}

// Close stops reading, drains handlers and closes the client.
func (m *RedisSource) Close(ctx context.Context) error {
	if m.c == nil {
		return nil
	}
	err := m.c.Close()
	return errors.Join(err, m.client.Close())
}

// DLQ operates the group's dead-letter stream.
func (m *RedisSource) DLQ() ops.DLQ {
	if m.client == nil {
		return ops.DLQ{}
	}
	return ops.DLQ{Redis: redisstream.NewDLQ(m.client, m.dlqStream())}
}

// StreamStatus reports the stream with the group's progress.
func (m *RedisSource) StreamStatus(ctx context.Context) (*streams.StreamStatus, error) {
	if m.client == nil {
		return nil, nil
	}
	st, err := redisstream.ReadStatus(ctx, m.client, m.Stream)
	return &st, err
}

var (
	_ registry.SourceModule = (*RedisSource)(nil)
	_ registry.Provisioner  = (*RedisSource)(nil)
	_ registry.Validator    = (*RedisSource)(nil)
	_ ops.DLQProvider       = (*RedisSource)(nil)
	_ ops.StreamStatuser    = (*RedisSource)(nil)
)

// dlqStream is the group's dead-letter stream: the configured one, or the default for
// the client (on Redis Cluster one in the stream's hash slot).
func (m *RedisSource) dlqStream() string {
	if m.DLQStream != "" {
		return m.DLQStream
	}
	return redisstream.DLQStreamFor(m.client, m.Stream)
}
