package modules

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/redisstream"
)

func init() { registry.Register(new(BusTransport)) }

// EnvEventBus selects the stream bus (R9): "kdb-stream" for kdbstream, "redis",
// "redis-stream" or unset for Redis; any other value is refused. The cutover from Redis
// is this flag and a restart.
const EnvEventBus = "KODER_EVENT_BUS"

// Bus values. eventbus (the library switch reading the same variable) spells Redis
// "redis-stream"; both spellings mean Redis here too, so one KODER_EVENT_BUS serves the
// hub and the services built on eventbus.
const (
	BusRedis       = "redis"
	BusRedisStream = "redis-stream"
	BusKDBStream   = "kdb-stream"
)

// BusTransport is the stream bus of R9 (transport.bus): the same naming config resolves
// to transport.redisstream or transport.kdbstream as KODER_EVENT_BUS (or bus:) says, so
// switching buses changes no config.
type BusTransport struct {
	// Bus is "redis" (or "redis-stream") or "kdb-stream". Default $KODER_EVENT_BUS, else
	// redis.
	Bus string `yaml:"bus"`
	// RedisURL is the Redis bus's URL. Default $KODER_REDIS_URL.
	RedisURL string `yaml:"redis_url"`
	// KDBURL is the kdbstream bus's database URL. Default the config's store.
	KDBURL string `yaml:"kdb_url"`
	// Service, Naming, Stream, MaxLen, MinIDAge: as both stream transports.
	Service  string        `yaml:"service"`
	Naming   string        `yaml:"naming"`
	Stream   string        `yaml:"stream"`
	MaxLen   int64         `yaml:"max_len"`
	MinIDAge time.Duration `yaml:"min_id_age"`
	// Encoding, DefaultActor, DefaultSubject: the entry format, as both stream
	// transports (encoding r2 or seed001; R2's values for events without them).
	Encoding       string `yaml:"encoding"`
	DefaultActor   string `yaml:"default_actor"`
	DefaultSubject string `yaml:"default_subject"`

	inner registry.TransportModule
}

// HubModule registers transport.bus.
func (*BusTransport) HubModule() registry.Info {
	return registry.Info{ID: "transport.bus", New: func() registry.Module { return new(BusTransport) },
		Doc: "the stream bus: Redis, or kdbstream when KODER_EVENT_BUS=kdb-stream (R9)"}
}

// Provision resolves the bus and provisions the module it stands for.
func (m *BusTransport) Provision(pc *registry.ProvisionContext) error {
	if m.Bus == "" {
		m.Bus = pc.Getenv(EnvEventBus)
	}
	switch m.Bus {
	case "", BusRedis, BusRedisStream:
		m.Bus = BusRedis
		m.inner = &RedisTransport{URL: m.RedisURL, Config: redisstream.Config{Service: m.Service, Naming: m.Naming, Stream: m.Stream, MaxLen: m.MaxLen, MinIDAge: m.MinIDAge,
			Encoding: m.Encoding, DefaultActor: m.DefaultActor, DefaultSubject: m.DefaultSubject}}
	case BusKDBStream:
		m.inner = &KDBTransport{URL: m.KDBURL, Config: kdbstream.Config{Service: m.Service, Naming: m.Naming, Stream: m.Stream, MaxLen: m.MaxLen, MinIDAge: m.MinIDAge,
			Encoding: m.Encoding, DefaultActor: m.DefaultActor, DefaultSubject: m.DefaultSubject}}
	default:
		return registry.Field("bus", "%q: want %s or %s (from bus: or %s)", m.Bus, BusRedis, BusKDBStream, EnvEventBus)
	}
	return m.inner.(registry.Provisioner).Provision(pc)
}

// Validate validates the resolved module.
func (m *BusTransport) Validate() error {
	err := m.inner.(registry.Validator).Validate()
	var fe *registry.FieldError
	if errors.As(err, &fe) && fe.Key == "url" {
		// the inner module's url is this module's redis_url or kdb_url
		key := "redis_url"
		if m.Bus == BusKDBStream {
			key = "kdb_url"
		}
		return registry.Field(key, "bus %s: %v", m.Bus, fe.Err)
	}
	if err != nil {
		return fmt.Errorf("bus %s: %w", m.Bus, err)
	}
	return nil
}

// Open opens the resolved transport.
func (m *BusTransport) Open(ctx context.Context, rt *registry.Runtime) (hub.Transport, error) {
	rt.Logger.Info("stream bus", "bus", m.Bus)
	return m.inner.Open(ctx, rt)
}

// DLQ is the resolved transport's.
func (m *BusTransport) DLQ() ops.DLQ { return m.inner.(ops.DLQProvider).DLQ() }

// BusStatus names the bus and reports its stream.
func (m *BusTransport) BusStatus(ctx context.Context) (ops.BusStatus, error) {
	st, err := m.inner.(ops.StreamStatuser).StreamStatus(ctx)
	return ops.BusStatus{Bus: m.Bus, Stream: st}, err
}

var (
	_ registry.TransportModule = (*BusTransport)(nil)
	_ registry.Provisioner     = (*BusTransport)(nil)
	_ registry.Validator       = (*BusTransport)(nil)
	_ ops.DLQProvider          = (*BusTransport)(nil)
	_ ops.BusStatuser          = (*BusTransport)(nil)
)
