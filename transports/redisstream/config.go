package redisstream

import (
	"errors"
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
	// DefaultMaxBatch caps the events of queued Sends coalesced into one round trip.
	DefaultMaxBatch = 1000
	// DefaultPipelines is how many pipelines may be in flight at once. Sends arriving
	// while they are busy queue up and leave together in the next one.
	DefaultPipelines = 2
	// DefaultName labels metrics and logs.
	DefaultName = "redisstream"
	// RetentionE8 is seed 001's stream retention (E8), the default MinIDAge of
	// per-category streams (streams.RetentionE8).
	RetentionE8 = streams.RetentionE8
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
	// MaxLen trims each stream to about this many entries (MAXLEN ~). Default 100000
	// (R6) for R1 and other streams, no cap for per-category streams (events.<word>),
	// which are trimmed by age instead (E8); a negative value disables the cap.
	MaxLen int64 `yaml:"max_len"`
	// MinIDAge trims entries older than this (XTRIM MINID ~, at most once a second per
	// stream). Default RetentionE8 (7 days, E8) for per-category streams, off for others.
	MinIDAge time.Duration `yaml:"min_id_age"`
	// Encoding is the entry format: streams.EncodingR2 ("r2", seed 000's fields, the
	// default) or streams.EncodingSeed001 ("seed001": seed 001's envelope as fields,
	// usually with Naming "category", as products reading events.user expect).
	Encoding string `yaml:"encoding"`
	// DefaultActor is R2's actor for events without one (default "system"). R2 wants
	// every field non-empty: a seed 000 consumer dead-letters an empty actor (N2).
	DefaultActor string `yaml:"default_actor"`
	// DefaultSubject is R2's subject_id for events without a subject. Default none:
	// such events are refused with InvalidArgument (and by the hub's Publish, naming the
	// route, unless the route has a default subject: hub.WithDefaultSubject).
	DefaultSubject string `yaml:"default_subject"`
	// MaxBatch caps the events of queued Sends coalesced into one pipelined round trip
	// (default 1000); a single Send is never split, so one larger than this goes alone.
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
	r := c.retention().Resolve(c.selection())
	c.MaxLen, c.MinIDAge = r.MaxLen, r.MinIDAge
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

// Validate reports every invalid field by name (joined with errors.Join).
func (c *Config) Validate() error {
	errs := []error{c.selection().Validate("redisstream"), c.wire().Validate("redisstream")}
	if c.MaxBatch < 0 {
		errs = append(errs, hub.Errorf(hub.InvalidArgument, "redisstream: Config.MaxBatch must be positive, got %d", c.MaxBatch))
	}
	if c.Pipelines < 0 {
		errs = append(errs, hub.Errorf(hub.InvalidArgument, "redisstream: Config.Pipelines must be positive, got %d", c.Pipelines))
	}
	return errors.Join(errs...)
}

// selection hands the naming fields to the code shared with kdbstream.
func (c *Config) selection() streams.Selection {
	return streams.Selection{Service: c.Service, Naming: c.Naming, Stream: c.Stream, Namer: c.Namer, MinIDAge: c.MinIDAge}
}

// wire hands the entry-format fields to the code shared with kdbstream.
func (c *Config) wire() streams.Wire {
	return streams.Wire{Encoding: c.Encoding, DefaultActor: c.DefaultActor, DefaultSubject: c.DefaultSubject}
}

// retention hands the trimming fields to the code shared with kdbstream.
func (c *Config) retention() streams.Retention {
	return streams.Retention{MaxLen: c.MaxLen, MinIDAge: c.MinIDAge}
}
