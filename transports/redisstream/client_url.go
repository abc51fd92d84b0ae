package redisstream

import (
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// ClientOptions is what ParseClientURL read: exactly one of its fields is set, by the
// URL's scheme.
type ClientOptions struct {
	Single   *redis.Options         // redis://, rediss://: one server
	Cluster  *redis.ClusterOptions  // redis+cluster://, rediss+cluster://: Redis Cluster
	Failover *redis.FailoverOptions // redis+sentinel://, rediss+sentinel://: Sentinel
}

// NewClient returns the go-redis client the options describe: a *redis.Client for one
// server or a Sentinel-managed master (go-redis's failover client follows the master
// Sentinel names), a *redis.ClusterClient for Redis Cluster.
func (o ClientOptions) NewClient() redis.UniversalClient {
	switch {
	case o.Cluster != nil:
		return redis.NewClusterClient(o.Cluster)
	case o.Failover != nil:
		return redis.NewFailoverClient(o.Failover)
	}
	return redis.NewClient(o.Single)
}

// ParseClientURL is ParseURL for every deployment shape go-redis knows:
//
//	redis://[user:pass@]host:port/db?param=value            one server (ParseURL)
//	redis+cluster://[user:pass@]h1:p1,h2:p2/?param=value    Redis Cluster seed nodes
//	redis+sentinel://[user:pass@]s1:p1,s2:p2/db?master_name=mymaster
//
// with rediss+cluster and rediss+sentinel for TLS. The host list is a convenience
// for go-redis's own shape, which ParseClusterURL and ParseFailoverURL read and which
// is accepted too: the first host plus one addr= parameter per further node. The
// Config parameters (service, stream, max_len...) are the same in every shape; the
// rest go to go-redis, which rejects what it does not know. A cluster URL has no
// database (Redis Cluster only has 0). For Sentinel, master_name is required and the
// credentials are used for both the sentinels and the master. Errors never contain the
// password.
func ParseClientURL(raw string, base Config) (ClientOptions, Config, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ClientOptions{}, base, hub.Errorf(hub.InvalidArgument, "redisstream: the URL has no scheme (want %s://, %s:// or %s://)", Scheme, SchemeCluster, SchemeSentinel)
	}
	var goScheme string
	switch scheme {
	case Scheme, SchemeTLS:
		opts, cfg, err := ParseURL(raw, base)
		return ClientOptions{Single: opts}, cfg, err
	case SchemeCluster, SchemeSentinel:
		goScheme = Scheme
	case SchemeClusterTLS, SchemeSentinelTLS:
		goScheme = SchemeTLS
	default:
		return ClientOptions{}, base, hub.Errorf(hub.InvalidArgument, "redisstream: URL %s: scheme must be %s://, %s://, %s:// or %s:// (or %s, %s with TLS)",
			redactSeedURL(raw), Scheme, SchemeTLS, SchemeCluster, SchemeSentinel, SchemeClusterTLS, SchemeSentinelTLS)
	}
	u, hosts, err := parseSeedURL(goScheme, rest)
	if err != nil {
		return ClientOptions{}, base, err
	}
	cfg := base
	q := u.Query()
	if err := streams.ApplyURLParams("redisstream", u, q, urlParams, &cfg); err != nil {
		return ClientOptions{}, base, err
	}
	for _, h := range hosts {
		q.Add("addr", h)
	}
	u.RawQuery = q.Encode()
	fail := func(err error) (ClientOptions, Config, error) {
		return ClientOptions{}, base, hub.Errorf(hub.InvalidArgument, "redisstream: URL %s: %s", redactSeedURL(raw), scrubSeedPassword(err.Error(), raw))
	}
	if scheme == SchemeCluster || scheme == SchemeClusterTLS {
		if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
			return ClientOptions{}, base, hub.Errorf(hub.InvalidArgument, "redisstream: URL %s: Redis Cluster has only database 0, not %q", redactSeedURL(raw), p)
		}
		u.Path = ""
		opts, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return fail(err)
		}
		return ClientOptions{Cluster: opts}, cfg, nil
	}
	opts, err := redis.ParseFailoverURL(u.String())
	if err != nil {
		return fail(err)
	}
	if opts.MasterName == "" {
		return ClientOptions{}, base, hub.Errorf(hub.InvalidArgument, "redisstream: URL %s: a Sentinel URL needs master_name=<the monitored master>", redactSeedURL(raw))
	}
	opts.Username, opts.Password = opts.SentinelUsername, opts.SentinelPassword
	return ClientOptions{Failover: opts}, cfg, nil
}

// parseSeedURL parses "[user:pass@]h1:p1,h2:p2/path?query" under goScheme, returning the
// URL with the first host and the further hosts: url.Parse refuses a comma list as a
// host (its port would not be numeric).
func parseSeedURL(goScheme, rest string) (*url.URL, []string, error) {
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	userinfo, hostList := "", authority
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		userinfo, hostList = authority[:i+1], authority[i+1:]
	}
	hosts := strings.Split(hostList, ",")
	for _, h := range hosts {
		if h == "" {
			return nil, nil, hub.Errorf(hub.InvalidArgument, "redisstream: URL %s://%s%s: empty host in the seed list", goScheme, redactUserinfo(userinfo), hostList)
		}
	}
	u, err := url.Parse(goScheme + "://" + userinfo + hosts[0] + tail)
	if err != nil {
		return nil, nil, hub.Errorf(hub.InvalidArgument, "redisstream: the URL does not parse (not shown: it may hold a password)")
	}
	return u, hosts[1:], nil
}

// redactSeedURL is raw with its password replaced, for errors: streams.Redact cannot
// parse a seed list.
func redactSeedURL(raw string) string {
	scheme, rest, _ := strings.Cut(raw, "://")
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	i := strings.LastIndex(authority, "@")
	if i < 0 {
		return raw
	}
	return scheme + "://" + redactUserinfo(authority[:i+1]) + rest[i+1:]
}

// scrubSeedPassword replaces raw's password wherever it occurs in msg.
func scrubSeedPassword(msg, raw string) string {
	_, rest, _ := strings.Cut(raw, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	i := strings.LastIndex(rest, "@")
	if i < 0 {
		return msg
	}
	if _, pass, ok := strings.Cut(rest[:i], ":"); ok && pass != "" {
		if p, err := url.PathUnescape(pass); err == nil && p != "" {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
		msg = strings.ReplaceAll(msg, pass, "xxxxx")
	}
	return msg
}

// redactUserinfo hides the password of "user:pass@" for an error message.
func redactUserinfo(userinfo string) string {
	if user, _, ok := strings.Cut(userinfo, ":"); ok {
		return user + ":xxxxx@"
	}
	return userinfo
}
