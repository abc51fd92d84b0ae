// Package eventbus is R9's switch: one publisher and consumer pair whose implementation
// (Redis Streams or kdbstream) is chosen when the application starts, by
// KODER_EVENT_BUS. Both implementations share the R2 fields, the R4 consumer loop and
// the consumer configuration (streams.ConsumerConfig), so the cutover after a migration
// is a flag flip and a restart, with no code change:
//
//	KODER_EVENT_BUS=redis-stream  (default)  KODER_REDIS_URL=rediss://user:pass@host:6379/0
//	KODER_EVENT_BUS=kdb-stream               KODER_KDB_URL=kdbstream:///var/lib/app/events.db
//
// The environment is read only by Open, and only for what Options leaves empty.
package eventbus

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/redisstream"
)

// Environment variables Open reads when Options leaves the matching field empty.
const (
	EnvBus    = "KODER_EVENT_BUS"
	EnvKDBURL = "KODER_KDB_URL"
)

// Bus kinds, spelled as KODER_EVENT_BUS takes them.
const (
	RedisStream = "redis-stream"
	KDBStream   = "kdb-stream"
)

// DefaultKDBURL is where kdbstream keeps its file when no URL is given: beside the
// application, like the hub binary's embedded default.
const DefaultKDBURL = "kdbstream://./data/events.db"

// Options picks and configures the bus. Zero values fall back to the environment, then
// to the defaults.
type Options struct {
	// Kind is RedisStream or KDBStream (default: KODER_EVENT_BUS, else RedisStream).
	Kind string
	// URL is the bus URL (default: KODER_REDIS_URL or KODER_KDB_URL, by kind; for
	// kdbstream then DefaultKDBURL).
	URL string

	// The publisher settings both buses share; see redisstream.Config for each.
	Service  string        // events go to koder:events:<Service> (R1)
	Naming   string        // streams.NamingService or streams.NamingCategory (events.<first word of type>)
	Stream   string        // one fixed stream for every event
	MaxLen   int64         // MAXLEN ~ cap (default 100000, none for per-category streams; negative disables)
	MinIDAge time.Duration // age trim (default 7 days for per-category streams, E8; off for others)
	// Encoding, DefaultActor, DefaultSubject: the entry format (streams.Wire): R2
	// (default) or seed001, and R2's values for events without actor or subject.
	Encoding       string
	DefaultActor   string
	DefaultSubject string
	Logger         *slog.Logger
	Metrics        *hub.StreamMetrics
}

// Bus is an open publisher with the matching consumer and idempotency constructors.
type Bus struct {
	kind  string
	redis *redisstream.Transport
	kdb   *kdbstream.Transport
}

// Open connects the bus selected by opts (or the environment).
func Open(ctx context.Context, opts Options) (*Bus, error) {
	kind := opts.Kind
	if kind == "" {
		kind = os.Getenv(EnvBus)
	}
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "", RedisStream, "redis":
		// An empty URL makes redisstream read KODER_REDIS_URL itself (R7).
		t, err := redisstream.OpenWith(ctx, opts.URL, redisstream.Config{
			Service: opts.Service, Naming: opts.Naming, Stream: opts.Stream, MaxLen: opts.MaxLen,
			MinIDAge: opts.MinIDAge, Encoding: opts.Encoding, DefaultActor: opts.DefaultActor,
			DefaultSubject: opts.DefaultSubject, Logger: opts.Logger, Metrics: opts.Metrics,
		})
		if err != nil {
			return nil, err
		}
		return &Bus{kind: RedisStream, redis: t}, nil
	case KDBStream, "kdbstream", "kdb":
		url := opts.URL
		if url == "" {
			url = os.Getenv(EnvKDBURL)
		}
		if url == "" {
			url = DefaultKDBURL
		}
		t, err := kdbstream.OpenWith(ctx, url, kdbstream.Config{
			Service: opts.Service, Naming: opts.Naming, Stream: opts.Stream, MaxLen: opts.MaxLen,
			MinIDAge: opts.MinIDAge, Encoding: opts.Encoding, DefaultActor: opts.DefaultActor,
			DefaultSubject: opts.DefaultSubject, Logger: opts.Logger, Metrics: opts.Metrics,
		})
		if err != nil {
			return nil, err
		}
		return &Bus{kind: KDBStream, kdb: t}, nil
	default:
		return nil, hub.Errorf(hub.InvalidArgument, "eventbus: %s=%q: want %q or %q", EnvBus, kind, RedisStream, KDBStream)
	}
}

// Kind reports which implementation is open: RedisStream or KDBStream.
func (b *Bus) Kind() string { return b.kind }

// Transport is the publishing half, for hub.Forward or direct Send.
func (b *Bus) Transport() hub.Transport {
	if b.kdb != nil {
		return b.kdb
	}
	return b.redis
}

// NewConsumer builds a consumer on the open bus; the same cfg works on both (stream,
// group, consumer, claim and DLQ settings, idempotency, version gate).
func (b *Bus) NewConsumer(cfg streams.ConsumerConfig) (hub.Consumer, error) {
	if b.kdb != nil {
		return b.kdb.NewConsumer(cfg)
	}
	return b.redis.NewConsumer(cfg)
}

// NewIdempotencyStore returns the R5 processed-events store kept by the bus itself
// (SET NX with TTL on Redis, a table on kdbstream), so dedup state moves with the data.
func (b *Bus) NewIdempotencyStore(ctx context.Context, prefix string) (hub.IdempotencyStore, error) {
	if b.kdb != nil {
		return kdbstream.NewIdempotencyStore(ctx, b.kdb.Engine(), prefix)
	}
	return redisstream.NewIdempotencyStore(b.redis.Client(), prefix), nil
}

// Close closes the transport and what Open created for it.
func (b *Bus) Close() error {
	if b.kdb != nil {
		return b.kdb.Close()
	}
	if b.redis != nil {
		return b.redis.Close()
	}
	return fmt.Errorf("eventbus: not open")
}
