package redisstream

import (
	"context"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// URL schemes and the environment variable of the default path (R7).
const (
	Scheme    = "redis"           // plain TCP: development
	SchemeTLS = "rediss"          // TLS: production (R7)
	EnvURL    = "KODER_REDIS_URL" // read by Open only when it is given no URL

	// Redis Cluster and Sentinel (ParseClientURL): the host part is a comma-separated
	// seed list, "redis+cluster://h1:7000,h2:7001/?max_redirects=5".
	SchemeCluster     = "redis+cluster"
	SchemeClusterTLS  = "rediss+cluster"
	SchemeSentinel    = "redis+sentinel"
	SchemeSentinelTLS = "rediss+sentinel"
)

// urlParams maps each query parameter to the Config field it sets: one per field.
// Parameters go-redis itself understands (dial_timeout, pool_size, read_timeout,
// skip_verify...) pass through to redis.ParseURL; anything else is an error.
var urlParams = map[string]func(c *Config, v string) error{
	"service":    func(c *Config, v string) error { c.Service = v; return nil },
	"naming":     func(c *Config, v string) error { c.Naming = v; return nil },
	"stream":     func(c *Config, v string) error { c.Stream = v; return nil },
	"max_len":    func(c *Config, v string) (err error) { c.MaxLen, err = strconv.ParseInt(v, 10, 64); return err },
	"min_id_age": func(c *Config, v string) (err error) { c.MinIDAge, err = time.ParseDuration(v); return err },
	"max_batch":  func(c *Config, v string) (err error) { c.MaxBatch, err = strconv.Atoi(v); return err },
	"pipelines":  func(c *Config, v string) (err error) { c.Pipelines, err = strconv.Atoi(v); return err },
	"name":       func(c *Config, v string) error { c.Name = v; return nil },
	"encoding":   func(c *Config, v string) error { c.Encoding = v; return nil },
	// default_actor and default_subject: R2's values for events without them.
	"default_actor":   func(c *Config, v string) error { c.DefaultActor = v; return nil },
	"default_subject": func(c *Config, v string) error { c.DefaultSubject = v; return nil },
}

// ParseURL splits a one-server URL, "redis://" or "rediss://[user:pass@]host:port/db?param=value" into
// go-redis options and the Config fields its query parameters set, on top of base.
// Errors never contain the password.
func ParseURL(raw string, base Config) (*redis.Options, Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole URL, password included: say less.
		return nil, base, hub.Errorf(hub.InvalidArgument, "redisstream: the URL does not parse (not shown: it may hold a password)")
	}
	if u.Scheme != Scheme && u.Scheme != SchemeTLS {
		return nil, base, hub.Errorf(hub.InvalidArgument, "redisstream: URL %s: scheme must be %s:// or %s://", u.Redacted(), Scheme, SchemeTLS)
	}
	cfg := base
	q := u.Query()
	if err := streams.ApplyURLParams("redisstream", u, q, urlParams, &cfg); err != nil {
		return nil, base, err
	}
	u.RawQuery = q.Encode()
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		// go-redis rejects unknown parameters ("unexpected option") itself.
		return nil, base, hub.Errorf(hub.InvalidArgument, "redisstream: URL %s: %s", u.Redacted(), streams.ScrubPassword(err.Error(), raw))
	}
	return opts, cfg, nil
}

// Open connects to the Redis at rawURL (any URL ParseClientURL takes: one server, a
// Redis Cluster or a Sentinel-managed master) and returns a Transport that owns its client
// (Close closes it). An empty rawURL means the KODER_REDIS_URL environment variable,
// read now; it is an error when that is empty too. Open does not fail when the server
// is down (Sends report Unavailable until it is back), but it warns when the server
// keeps nothing on disk.
func Open(ctx context.Context, rawURL string) (*Transport, error) {
	return OpenWith(ctx, rawURL, Config{})
}

// OpenWith is Open with a base Config (Logger, Metrics, Namer and defaults for fields
// the URL does not set).
func OpenWith(ctx context.Context, rawURL string, base Config) (*Transport, error) {
	if rawURL == "" {
		rawURL = os.Getenv(EnvURL)
		if rawURL == "" {
			return nil, hub.Errorf(hub.InvalidArgument, "redisstream: no URL given and %s is not set", EnvURL)
		}
	}
	opts, cfg, err := ParseClientURL(rawURL, base)
	if err != nil {
		return nil, err
	}
	client := opts.NewClient()
	t, err := New(client, cfg)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	t.owned = true
	WarnIfVolatile(ctx, client, t.cfg.Logger)
	return t, nil
}
