package kdbstream

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// URL schemes Open accepts.
const (
	Scheme         = "kdbstream"  // kdbstream:///var/lib/hub/events.db: SQLite file
	SchemeSQLite   = "sqlite"     // sqlite:///var/lib/hub/events.db: the same
	SchemePostgres = "postgres"   // postgres://user@host/db: PostgreSQL (also postgresql://)
	schemePG2      = "postgresql" //
)

// urlParams maps each query parameter to the field it sets, one per field. On a
// PostgreSQL URL, other parameters pass through to pgx (sslmode, ...); on SQLite any
// other parameter is an error.
var urlParams = map[string]func(t urlTarget, v string) error{
	"service": func(t urlTarget, v string) error { t.c.Service = v; return nil },
	"naming":  func(t urlTarget, v string) error { t.c.Naming = v; return nil },
	"stream":  func(t urlTarget, v string) error { t.c.Stream = v; return nil },
	"max_len": func(t urlTarget, v string) (err error) { t.c.MaxLen, err = strconv.ParseInt(v, 10, 64); return err },
	"min_id_age": func(t urlTarget, v string) (err error) {
		t.c.MinIDAge, err = time.ParseDuration(v)
		return err
	},
	"name":     func(t urlTarget, v string) error { t.c.Name = v; return nil },
	"encoding": func(t urlTarget, v string) error { t.c.Encoding = v; return nil },
	// default_actor and default_subject: R2's values for events without them.
	"default_actor":   func(t urlTarget, v string) error { t.c.DefaultActor = v; return nil },
	"default_subject": func(t urlTarget, v string) error { t.c.DefaultSubject = v; return nil },
	"synchronous":     func(t urlTarget, v string) error { t.e.Synchronous = v; return nil },
	"schema":          func(t urlTarget, v string) error { t.e.Schema = v; return nil },
	"max_batch":       func(t urlTarget, v string) (err error) { t.e.MaxBatch, err = strconv.Atoi(v); return err },
	"poll_interval": func(t urlTarget, v string) (err error) {
		t.e.PollInterval, err = time.ParseDuration(v)
		return err
	},
}

// urlTarget is what a kdbstream URL sets: transport fields and engine fields.
type urlTarget struct {
	c *Config
	e *engine.Config
}

// ParseURL splits a kdbstream URL into the engine's configuration and the Config
// fields its query parameters set, on top of base. Errors never contain a password.
func ParseURL(raw string, base Config) (engine.Config, Config, error) {
	cfg := base
	var ec engine.Config
	u, err := url.Parse(raw)
	if err != nil {
		return ec, base, hub.Errorf(hub.InvalidArgument, "kdbstream: the URL does not parse (not shown: it may hold a password)")
	}
	q := u.Query()
	if err := streams.ApplyURLParams("kdbstream", u, q, urlParams, urlTarget{&cfg, &ec}); err != nil {
		return ec, base, err
	}
	switch u.Scheme {
	case Scheme, SchemeSQLite:
		if len(q) > 0 {
			for k := range q {
				return ec, base, hub.Errorf(hub.InvalidArgument, "kdbstream: URL %s: unknown parameter %s", u.Redacted(), k)
			}
		}
		ec.Driver = engine.DriverSQLite
		// kdbstream:///abs/path.db -> /abs/path.db; sqlite://rel.db -> rel.db.
		ec.DSN = u.Host + u.Path
		if u.Opaque != "" {
			ec.DSN = u.Opaque
		}
	case SchemePostgres, schemePG2:
		ec.Driver = engine.DriverPostgres
		u.RawQuery = q.Encode()
		ec.DSN = u.String()
	default:
		return ec, base, hub.Errorf(hub.InvalidArgument, "kdbstream: URL %s: scheme must be kdbstream://, sqlite:// or postgres://", u.Redacted())
	}
	if ec.DSN == "" {
		return ec, base, hub.Errorf(hub.InvalidArgument, "kdbstream: URL %s: no database file", u.Redacted())
	}
	return ec, cfg, nil
}

// Open opens (creating if needed) the database at rawURL and returns a Transport that
// owns its engine (Close closes it). Reading KODER_EVENT_BUS is the caller's business:
// Open takes the URL it is given.
func Open(ctx context.Context, rawURL string) (*Transport, error) {
	return OpenWith(ctx, rawURL, Config{})
}

// OpenWith is Open with a base Config (Logger, Metrics, Namer and defaults for fields
// the URL does not set).
func OpenWith(ctx context.Context, rawURL string, base Config) (*Transport, error) {
	ec, cfg, err := ParseURL(rawURL, base)
	if err != nil {
		return nil, err
	}
	if cfg.Namer == nil && cfg.Service == "" && cfg.Stream == "" && cfg.Naming == "" {
		return nil, hub.Errorf(hub.InvalidArgument, "kdbstream: URL %s: one of service=, stream= or naming=category is required", streams.Redact(rawURL))
	}
	eng, err := engine.Open(ctx, ec)
	if err != nil {
		return nil, hub.Errorf(hub.Code(err), "kdbstream: open %s: %s", streams.Redact(rawURL), streams.ScrubPassword(err.Error(), rawURL))
	}
	t, err := New(eng, cfg)
	if err != nil {
		eng.Close()
		return nil, err
	}
	t.owned = true
	return t, nil
}

// OpenEngine opens only the engine of a URL (for Migrate, consumers, tools).
func OpenEngine(ctx context.Context, rawURL string) (*engine.Engine, error) {
	ec, _, err := ParseURL(rawURL, Config{})
	if err != nil {
		return nil, err
	}
	return engine.Open(ctx, ec)
}
