package modules

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

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

	t *redisstream.Transport
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
	return validateRedis(m.URL, m.Config)
}

func validateRedis(url string, c redisstream.Config) error {
	if url == "" {
		return registry.Field("url", "required (or set %s)", redisstream.EnvURL)
	}
	_, cfg, err := redisstream.ParseURL(url, c)
	if err != nil {
		return registry.Field("url", "%v", err)
	}
	if cfg.Naming == "" && cfg.Service != "" {
		cfg.Naming = streams.NamingService
	}
	return cfg.Validate()
}

// Open connects (a down server is not an error: sends report Unavailable until it is up).
func (m *RedisTransport) Open(ctx context.Context, rt *registry.Runtime) (hub.Transport, error) {
	cfg := m.Config
	cfg.Logger, cfg.Metrics = rt.Logger, rt.StreamMets
	t, err := redisstream.OpenWith(ctx, m.URL, cfg)
	if err != nil {
		return nil, err
	}
	m.t = t
	return t, nil
}

// stream is the fixed stream this transport writes, when it has one.
func (m *RedisTransport) stream() string { return m.selection().FixedStream() }

func (m *RedisTransport) selection() streams.Selection {
	return streams.Selection{Service: m.Service, Naming: m.Naming, Stream: m.Stream}
}

// DLQ is the dead-letter stream of the transport's stream (category naming: events.dlq).
func (m *RedisTransport) DLQ() ops.DLQ {
	if m.t == nil {
		return nil
	}
	return redisDLQ{redisstream.NewDLQ(m.t.Client(), m.selection().DLQStream())}
}

// Status reports the stream's length and each group's pending count and lag.
func (m *RedisTransport) Status(ctx context.Context) (any, error) {
	if m.t == nil || m.stream() == "" {
		return nil, nil
	}
	return redisStatus(ctx, m.t.Client(), m.stream())
}

func redisStatus(ctx context.Context, c redis.UniversalClient, stream string) (any, error) {
	n, err := c.XLen(ctx, stream).Result()
	if err != nil {
		return nil, err
	}
	groups, err := c.XInfoGroups(ctx, stream).Result()
	if err != nil && !isNoSuchKey(err) {
		return nil, err
	}
	type group struct {
		Name            string `json:"name"`
		Consumers       int64  `json:"consumers"`
		Pending         int64  `json:"pending"`
		Lag             int64  `json:"lag"`
		LastDeliveredID string `json:"last_delivered_id"`
	}
	out := struct {
		Stream string  `json:"stream"`
		Length int64   `json:"length"`
		Groups []group `json:"groups"`
	}{Stream: stream, Length: n}
	for _, g := range groups {
		out.Groups = append(out.Groups, group{g.Name, g.Consumers, g.Pending, g.Lag, g.LastDeliveredID})
	}
	return out, nil
}

func isNoSuchKey(err error) bool { return err != nil && err.Error() == "ERR no such key" }

// redisDLQ adapts redisstream.DLQ to the admin API.
type redisDLQ struct{ d *redisstream.DLQ }

func (r redisDLQ) List(ctx context.Context, limit int) (any, error) {
	n, err := r.d.Len(ctx)
	if err != nil {
		return nil, err
	}
	items, err := r.d.List(ctx, "", int64(limit))
	return map[string]any{"stream": r.d.Stream(), "total": n, "entries": items}, err
}

func (r redisDLQ) Inspect(ctx context.Context, id string) (any, error) { return r.d.Get(ctx, id) }

func (r redisDLQ) Replay(ctx context.Context, ids []string, all bool) (int, error) {
	if all {
		var err error
		if ids, err = r.allIDs(ctx); err != nil {
			return 0, err
		}
	}
	n := 0
	var errs []error
	for _, id := range ids {
		if _, err := r.d.Replay(ctx, id); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func (r redisDLQ) Purge(ctx context.Context, ids []string, all bool) (int, error) {
	if all {
		ids = nil
	}
	n, err := r.d.Purge(ctx, ids...)
	return int(n), err
}

func (r redisDLQ) allIDs(ctx context.Context) ([]string, error) {
	var ids []string
	after := ""
	for {
		page, err := r.d.List(ctx, after, 500)
		if err != nil {
			return nil, err
		}
		for _, dl := range page {
			ids = append(ids, dl.ID)
		}
		if len(page) < 500 {
			return ids, nil
		}
		after = page[len(page)-1].ID
	}
}

var (
	_ registry.TransportModule = (*RedisTransport)(nil)
	_ registry.Provisioner     = (*RedisTransport)(nil)
	_ registry.Validator       = (*RedisTransport)(nil)
	_ ops.DLQProvider          = (*RedisTransport)(nil)
	_ ops.Statuser             = (*RedisTransport)(nil)
)
