package kdbstream

import (
	"errors"
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
	// MaxLen trims each stream to about this many entries (MAXLEN ~). Default 100000
	// (R6) for R1 and other streams, no cap for per-category streams (events.<word>),
	// which are trimmed by age instead (E8); a negative value disables the cap.
	MaxLen int64 `yaml:"max_len"`
	// MinIDAge trims entries older than this (MINID ~, at most once a second per
	// stream). Default 7 days (streams.RetentionE8) for per-category streams, off for
	// others.
	MinIDAge time.Duration `yaml:"min_id_age"`
	// Encoding is the entry format: streams.EncodingR2 ("r2", the default) or
	// streams.EncodingSeed001 ("seed001", seed 001's envelope as fields).
	Encoding string `yaml:"encoding"`
	// DefaultActor is R2's actor for events without one (default "system").
	DefaultActor string `yaml:"default_actor"`
	// DefaultSubject is R2's subject_id for events without a subject. Default none:
	// such events are refused with InvalidArgument (and by the hub's Publish, naming the
	// route, unless the route has a default subject).
	DefaultSubject string `yaml:"default_subject"`
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
	r := c.retention().Resolve(c.selection())
	c.MaxLen, c.MinIDAge = r.MaxLen, r.MinIDAge
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

// Validate reports every invalid field by name, joined (the rules are the Redis
// transport's, shared through streams.Selection).
func (c *Config) Validate() error {
	return errors.Join(c.selection().Validate("kdbstream"), c.wire().Validate("kdbstream"))
}

// selection hands the naming fields to the code shared with the Redis transport.
func (c *Config) selection() streams.Selection {
	return streams.Selection{Service: c.Service, Naming: c.Naming, Stream: c.Stream, Namer: c.Namer, MinIDAge: c.MinIDAge}
}

// wire hands the entry-format fields to the code shared with the Redis transport.
func (c *Config) wire() streams.Wire {
	return streams.Wire{Encoding: c.Encoding, DefaultActor: c.DefaultActor, DefaultSubject: c.DefaultSubject}
}

// retention hands the trimming fields to the code shared with the Redis transport.
func (c *Config) retention() streams.Retention {
	return streams.Retention{MaxLen: c.MaxLen, MinIDAge: c.MinIDAge}
}
