package kdbstream

import (
	"log/slog"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// Defaults of Config. The cap is the shared one (streams.DefaultMaxLen, the Redis
// transport's too), so that switching buses (R9) changes no retention.
const (
	// DefaultMaxLen caps each stream at about this many entries (R6's MAXLEN ~ 100000).
	DefaultMaxLen = streams.DefaultMaxLen
	// DefaultName labels metrics and logs.
	DefaultName = "kdbstream"
)

// minIDTrimInterval spaces out MINID trims of one stream (housekeeping, not per append).
const minIDTrimInterval = time.Second

// Config configures a Transport. Its fields are redisstream.Config's (minus the
// pipelining knobs, replaced by the engine's group commit) with the same yaml keys, and
// their rules are the same code (streams.Selection): exactly one of Namer, Stream,
// Naming "category" or Service picks the stream of each event. The fields stay flat
// rather than embedding Selection so that existing composite literals keep compiling.
type Config struct {
	// Service is the origin service: events go to "koder:events:<Service>" (R1).
	Service string `yaml:"service"`
	// Naming is streams.NamingService ("service", the default when Service is set) or
	// streams.NamingCategory ("category": events.<first word of type>).
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
	Namer streams.Namer `yaml:"-"`
	// Logger receives event_emitted (debug) and append failures (default slog.Default()).
	Logger *slog.Logger `yaml:"-"`
	// Metrics receives event_count_total (default: unregistered collectors).
	Metrics *hub.StreamMetrics `yaml:"-"`
}

func (c *Config) setDefaults() {
	c.Naming = streams.DefaultNaming(c.Naming, c.Service)
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

// Validate reports the first invalid field by name (the rules are the Redis
// transport's, shared through streams.Selection).
func (c *Config) Validate() error {
	return c.selection().Validate("kdbstream")
}

// selection hands the naming fields to the code shared with the Redis transport.
func (c *Config) selection() streams.Selection {
	return streams.Selection{Service: c.Service, Naming: c.Naming, Stream: c.Stream, Namer: c.Namer, MinIDAge: c.MinIDAge}
}
