package kdbstream

import (
	"log/slog"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/redisstream"
)

// Defaults of Config: the Redis transport's, so that switching buses (R9) changes no
// retention or naming.
const (
	// DefaultMaxLen caps each stream at about this many entries (R6's MAXLEN ~ 100000).
	DefaultMaxLen = redisstream.DefaultMaxLen
	// DefaultName labels metrics and logs.
	DefaultName = "kdbstream"
)

// Naming conventions, the same names as the Redis transport's (Config.Naming, naming=).
const (
	NamingService  = redisstream.NamingService  // koder:events:<Service> (R1)
	NamingCategory = redisstream.NamingCategory // events.<first word of type> (E8)
)

// minIDTrimInterval spaces out MINID trims of one stream (housekeeping, not per append).
const minIDTrimInterval = time.Second

// Config configures a Transport. It mirrors redisstream.Config field for field (minus
// the pipelining knobs, replaced by the engine's group commit): exactly one of Namer,
// Stream, Naming "category" or Service picks the stream of each event.
type Config struct {
	// Service is the origin service: events go to "koder:events:<Service>" (R1).
	Service string `yaml:"service"`
	// Naming is "service" (default when Service is set) or "category" (events.<word>).
	Naming string `yaml:"naming"`
	// Stream sends every event to this one stream (reserved prefix rules apply).
	Stream string `yaml:"stream"`
	// MaxLen trims each stream to about this many entries (MAXLEN ~, default 100000);
	// a negative value disables the cap.
	MaxLen int64 `yaml:"max_len"`
	// MinIDAge, when positive, also trims entries older than this (MINID, at most once a
	// second per stream). Default off.
	MinIDAge time.Duration `yaml:"min_id_age"`
	// Name labels metrics and logs (default "kdbstream").
	Name string `yaml:"name"`

	// Namer overrides the naming fields with a function of the event.
	Namer redisstream.Namer `yaml:"-"`
	// Logger receives event_emitted (debug) and append failures (default slog.Default()).
	Logger *slog.Logger `yaml:"-"`
	// Metrics receives event_count_total (default: unregistered collectors).
	Metrics *hub.StreamMetrics `yaml:"-"`
}

func (c *Config) setDefaults() {
	if c.Naming == "" && c.Service != "" {
		c.Naming = NamingService
	}
	if c.MaxLen == 0 {
		c.MaxLen = DefaultMaxLen
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = hub.NewStreamMetrics(nil)
	}
}

// Validate reports the first invalid field by name.
func (c *Config) Validate() error {
	sources := 0
	for _, set := range []bool{c.Namer != nil, c.Stream != "", c.Naming == NamingCategory, c.Naming == NamingService} {
		if set {
			sources++
		}
	}
	switch {
	case c.Naming != "" && c.Naming != NamingService && c.Naming != NamingCategory:
		return hub.Errorf(hub.InvalidArgument, "kdbstream: Config.Naming must be %q or %q, got %q", NamingService, NamingCategory, c.Naming)
	case sources == 0:
		return hub.Errorf(hub.InvalidArgument, "kdbstream: one of Config.Service, Config.Stream, Config.Naming=category or Config.Namer is required")
	case sources > 1:
		return hub.Errorf(hub.InvalidArgument, "kdbstream: Config.Service/Naming, Config.Stream and Config.Namer are exclusive; set one")
	case c.Naming == NamingService && redisstream.ValidateService(c.Service) != nil:
		return hub.Errorf(hub.InvalidArgument, "kdbstream: Config.Service: %v", redisstream.ValidateService(c.Service))
	case c.Stream != "" && redisstream.ValidateStream(c.Stream) != nil:
		return hub.Errorf(hub.InvalidArgument, "kdbstream: Config.Stream: %v", redisstream.ValidateStream(c.Stream))
	case c.MinIDAge < 0:
		return hub.Errorf(hub.InvalidArgument, "kdbstream: Config.MinIDAge must not be negative, got %s", c.MinIDAge)
	}
	return nil
}

// namer resolves the naming fields into one Namer (the Redis transport's conventions).
func (c *Config) namer() redisstream.Namer {
	switch {
	case c.Namer != nil:
		return c.Namer
	case c.Stream != "":
		return redisstream.Fixed(c.Stream)
	case c.Naming == NamingCategory:
		return redisstream.PerCategory()
	}
	return redisstream.PerService(c.Service)
}
