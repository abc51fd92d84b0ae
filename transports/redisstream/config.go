package redisstream

import (
	"log/slog"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// Defaults of Config.
const (
	// DefaultMaxLen caps each stream at about this many entries (R6: MAXLEN ~ 100000),
	// the same cap as kdbstream's (streams.DefaultMaxLen). The cap trims entries whether
	// or not every group has read them: size it above the backlog the slowest group may
	// build, or use MinIDAge instead.
	DefaultMaxLen = streams.DefaultMaxLen
	// DefaultMaxBatch is the most events one pipelined round trip carries.
	DefaultMaxBatch = 1000
	// DefaultPipelines is how many pipelines may be in flight at once. Sends arriving
	// while they are busy queue up and leave together in the next one.
	DefaultPipelines = 2
	// DefaultName labels metrics and logs.
	DefaultName = "redisstream"
	// RetentionE8 is seed 001's stream retention (E8), a ready value for MinIDAge.
	RetentionE8 = 7 * 24 * time.Hour
)

// minIDTrimInterval spaces out MINID trims of one stream: trimming by age is
// housekeeping, and one XTRIM per stream per second is plenty.
const minIDTrimInterval = time.Second

// Config configures a Transport. Exactly one of Namer, Stream, Naming "category" or
// Service picks the stream of each event; the rules are streams.Selection's, shared
// with kdbstream, so both buses accept and name the same configurations (R9).
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
	// MinIDAge, when positive, also trims entries older than this (XTRIM MINID ~, at
	// most once a second per stream); RetentionE8 is seed 001's 7 days. Default off.
	MinIDAge time.Duration `yaml:"min_id_age"`
	// MaxBatch is the most events per pipelined round trip (default 1000).
	MaxBatch int `yaml:"max_batch"`
	// Pipelines is the number of round trips in flight at once (default 2).
	Pipelines int `yaml:"pipelines"`
	// Name labels metrics and logs (default "redisstream").
	Name string `yaml:"name"`

	// Namer overrides the naming fields with a function of the event.
	Namer streams.Namer `yaml:"-"`
	// Logger receives event_emitted (debug) and publish failures (default slog.Default()).
	Logger *slog.Logger `yaml:"-"`
	// Metrics receives event_count_total (default: unregistered collectors).
	Metrics *hub.StreamMetrics `yaml:"-"`
}

func (c *Config) setDefaults() {
	c.Naming = streams.DefaultNaming(c.Naming, c.Service)
	if c.MaxLen == 0 {
		c.MaxLen = DefaultMaxLen
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.Pipelines == 0 {
		c.Pipelines = DefaultPipelines
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
	if err := c.selection().Validate("redisstream"); err != nil {
		return err
	}
	switch {
	case c.MaxBatch < 0:
		return hub.Errorf(hub.InvalidArgument, "redisstream: Config.MaxBatch must be positive, got %d", c.MaxBatch)
	case c.Pipelines < 0:
		return hub.Errorf(hub.InvalidArgument, "redisstream: Config.Pipelines must be positive, got %d", c.Pipelines)
	}
	return nil
}

// selection hands the naming fields to the code shared with kdbstream.
func (c *Config) selection() streams.Selection {
	return streams.Selection{Service: c.Service, Naming: c.Naming, Stream: c.Stream, Namer: c.Namer, MinIDAge: c.MinIDAge}
}
