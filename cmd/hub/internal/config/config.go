// Package config is the hub binary's configuration file: its shape, ${VAR} substitution,
// strict decoding with line numbers, and the checks that need no module.
//
// Module sections (sources and transports) are kept as YAML nodes here and decoded by
// the module that owns them (see cmd/hub/internal/registry), the way Caddy keeps module
// JSON raw until the module is loaded: the config package knows no transport.
package config

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/outbox"
)

// Defaults of the top-level sections.
const (
	DefaultAdminListen     = "127.0.0.1:8081"
	DefaultShutdownTimeout = 15 * time.Second
	DefaultLogLevel        = "info"
	DefaultLogFormat       = "text"
)

// Config is one hub process.
type Config struct {
	// Log configures the slog output.
	Log Log `yaml:"log"`
	// Store is the SQL database shared by the River ledger (webhook deliveries and the
	// outbox) and kdbstream: an SQLite file for one node, PostgreSQL for several.
	Store Store `yaml:"store"`
	// Schemas adds JSON Schemas to the built-in catalogue.
	Schemas Schemas `yaml:"schemas"`
	// Sources feed events into the hub (hub.Publish): HTTP ingress, stream groups, queues.
	Sources map[string]Module `yaml:"sources"`
	// Transports are the destinations routes forward to, by name.
	Transports map[string]Module `yaml:"transports"`
	// Routes bind event type patterns to transports.
	Routes []Route `yaml:"routes"`
	// Outbox tunes the relay of routes with delivery: outbox (attempts, backoff,
	// workers); its keys are outbox.Config's. Rows live in the store's River ledger.
	Outbox outbox.Config `yaml:"outbox"`
	// Admin is the operations API (health, DLQs, endpoints, deliveries, outbox, metrics).
	Admin Admin `yaml:"admin"`
	// Auth configures API keys, JWTs, link tokens and the audit trail (auth.go).
	Auth Auth `yaml:"auth"`
	// Secrets configures the key ring encrypting webhook signing secrets at rest.
	Secrets Secrets `yaml:"secrets"`
	// Metrics optionally serves /metrics on a listener of its own (it is always on admin).
	Metrics Metrics `yaml:"metrics"`
	// RESP optionally serves the store's kdbstream streams over the Redis protocol.
	RESP RESP `yaml:"resp"`
	// Failures records each final direct-delivery failure as a hub.transport.failed
	// event (F1): by default in the store's kdbstream stream hub.failures.
	Failures Failures `yaml:"failures"`
	// ShutdownTimeout bounds the drain after SIGTERM. Default 15s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// InstanceID names this process among the replicas of a deployment: every log line
	// carries it as "instance" and every metric as the hub_instance label. Default
	// "<hostname>-<pid>" (app.InstanceID). Letters, digits and ".-_:", at most 128.
	InstanceID string `yaml:"instance_id"`
}

// Log is the slog configuration; --log-level and --log-format override it.
type Log struct {
	Level  string `yaml:"level"`  // debug, info, warn, error. Default info.
	Format string `yaml:"format"` // text or json. Default text.
}

// Store selects the SQL database. Exactly one of SQLite and Postgres, or neither when
// nothing needs one (no outbox route, no webhook or kdbstream module).
type Store struct {
	// SQLite is the database file path; its directory is created at start.
	SQLite string `yaml:"sqlite"`
	// StreamsSQLite, with SQLite, is the file of the kdbstream streams; empty: the
	// same file. A file of their own gives the streams their own writer: SQLite has
	// one writer per file, and the ledger and the stream relay would otherwise wait on
	// each other's locks. A SQLite file that already holds streams keeps them (the
	// setting is then ignored, with a warning), so an upgrade loses nothing.
	StreamsSQLite string `yaml:"streams_sqlite"`
	// Postgres is a PostgreSQL DSN (postgres://user:pass@host:5432/db?sslmode=...).
	Postgres string `yaml:"postgres"`
	// Schema is the PostgreSQL schema (search_path) for the hub's tables. Default: the
	// server's search_path for the ledger's tables, "public" for kdbstream's.
	Schema string `yaml:"schema"`
	// Ledger tunes the River ledger (webhook deliveries and outbox rows) on this store;
	// its keys are ledger.Config's, zero keeping the ledger's default, except dsn and
	// schema, which come from this section.
	Ledger ledger.Config `yaml:"ledger"`
}

// Schemas adds payload schemas to the registry.
type Schemas struct {
	// Builtin keeps the identity catalogue (seed 001 and identity.user.erased). Default true.
	Builtin *bool `yaml:"builtin"`
	// Files are extra schemas, one JSON Schema per file.
	Files []SchemaFile `yaml:"files"`
	// Dirs are directories of files named <type>.v<major>.json, loaded whole.
	Dirs []string `yaml:"dirs"`
}

// SchemaFile defines one event type's payload schema for one MAJOR version.
type SchemaFile struct {
	Type  string `yaml:"type"`  // event type, e.g. billing.invoice.paid
	Major int    `yaml:"major"` // MAJOR version of the payload (dataversion). Default 1.
	Path  string `yaml:"path"`  // JSON Schema file, relative to the config file
}

// Route forwards events whose type matches Pattern to every transport in To.
type Route struct {
	// Pattern uses RabbitMQ topic syntax on the type: "*" one word, "#" zero or more;
	// a bare "*" is every event except the hub's own hub.* events.
	Pattern string `yaml:"pattern"`
	// To names transports (keys of the transports section); one name or a list.
	To StringList `yaml:"to"`
	// Delivery is direct (off the request path, retried in memory) or outbox (stored
	// durably before Publish returns, relayed by River). Default direct.
	Delivery string `yaml:"delivery"`
	// Retry tunes direct delivery attempts for this route; outbox routes follow the
	// outbox section.
	Retry Retry `yaml:"retry"`
	// DefaultSubject is the subject this route gives events that have none
	// (hub.WithDefaultSubject). Without it, an event with no subject routed to an R2
	// stream (transport redisstream, kdbstream or bus with encoding r2, whose subject_id
	// is mandatory, and no default_subject of its own) is refused with a 400 naming
	// /subject and this route.
	DefaultSubject string `yaml:"default_subject"`
	// Filter is a CloudEvents SQL expression an event must also satisfy to take this
	// route (hub.WithFilter): `tenantid = 'acme' AND data.plan = 'pro'`. Checked at
	// intake, before the event is queued or stored for the route. Default none.
	Filter string `yaml:"filter"`
}

// Retry is a route's delivery policy.
type Retry struct {
	// Attempts is the number of tries of a direct route (default hub.DefaultAttempts;
	// zero keeps it). An outbox route refuses retry: use outbox.max_attempts.
	Attempts int `yaml:"attempts"`
	// Backoff is the first delay; later ones grow exponentially up to BackoffMax.
	Backoff time.Duration `yaml:"backoff"`
	// BackoffMax caps the delay between attempts.
	BackoffMax time.Duration `yaml:"max_backoff"`
}

// Admin is the operations API listener.
type Admin struct {
	// Listen is host:port. Default 127.0.0.1:8081. "off" disables the admin API.
	Listen string `yaml:"listen"`
	// Token is the bearer token every request but /healthz and /readyz must carry;
	// several, separated by commas or spaces, are all accepted (rotation: add the new
	// one, move clients, drop the old one). Without a token (here or in token_file) the
	// API only listens on, and only answers, loopback addresses.
	Token string `yaml:"token"`
	// AdminAccess: token_file, hosts, origins, max_concurrent, tls (auth.go).
	AdminAccess `yaml:",inline"`
	// UI is the web console and tenant portal at /ui (ui.go).
	UI UI `yaml:"ui"`
}

// Metrics is an optional separate Prometheus listener.
type Metrics struct {
	// Listen is host:port for /metrics without authentication. Empty: only the admin
	// API serves /metrics.
	Listen string `yaml:"listen"`
	// Pprof also serves Go's runtime profiles at /debug/pprof/ on this listener, for
	// finding where CPU and memory go under real load. Off by default: profiles show
	// internals and cost CPU while taken, so bind the listener to loopback when on.
	Pprof bool `yaml:"pprof"`
	// Hosts are further names the Host header may carry, as admin.hosts: loopback
	// names and addresses and the address a scrape arrives at are always allowed, so
	// only a scraper that addresses the hub by a DNS name needs it listed. Anything
	// else is refused (a page in a browser on this machine reading metrics or profiles
	// through DNS rebinding).
	Hosts []string `yaml:"hosts"`
}

// Module is a source or transport section: `type` names the module (the ID
// "transport.<type>" or "source.<type>") and the other keys are the module's own,
// decoded strictly by it.
type Module struct {
	Type string
	// Filter is the section's `filter` key: a CESQL expression a source's events must
	// satisfy to be published (sources only; validate refuses it on a transport).
	Filter string
	Node   *yaml.Node // the whole mapping, `type` included
}

// UnmarshalYAML keeps the node for the module and checks only that `type` is there.
func (m *Module) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("expected a mapping with a \"type\" key")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "type":
			m.Type = n.Content[i+1].Value
		case "filter":
			m.Filter = n.Content[i+1].Value
		}
	}
	if m.Type == "" {
		return fmt.Errorf("missing \"type\" (which module builds this section)")
	}
	m.Node = n
	return nil
}

// Body returns the module's mapping without the `type` and `filter` keys (the app's,
// not the module's), for strict decoding into the module's config struct.
func (m Module) Body() *yaml.Node {
	c := *m.Node
	c.Content = nil
	for i := 0; i+1 < len(m.Node.Content); i += 2 {
		if k := m.Node.Content[i].Value; k != "type" && k != "filter" {
			c.Content = append(c.Content, m.Node.Content[i], m.Node.Content[i+1])
		}
	}
	return &c
}

// StringList accepts one string or a list of strings.
type StringList []string

// UnmarshalYAML accepts `to: redis` as well as `to: [redis, rabbit]`.
func (s *StringList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*s = StringList{n.Value}
		return nil
	case yaml.SequenceNode:
		out := make(StringList, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: expected a transport name", c.Line)
			}
			out = append(out, c.Value)
		}
		*s = out
		return nil
	}
	return fmt.Errorf("expected a transport name or a list of names")
}

// BuiltinSchemas reports whether the built-in catalogue is on (the default).
func (s Schemas) BuiltinSchemas() bool { return s.Builtin == nil || *s.Builtin }

// AdminEnabled reports whether the admin API listens.
func (a Admin) AdminEnabled() bool { return !strings.EqualFold(a.Listen, "off") }

func (c *Config) setDefaults() {
	if c.Log.Level == "" {
		c.Log.Level = DefaultLogLevel
	}
	if c.Log.Format == "" {
		c.Log.Format = DefaultLogFormat
	}
	if c.Admin.Listen == "" {
		c.Admin.Listen = DefaultAdminListen
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	for i := range c.Routes {
		if c.Routes[i].Delivery == "" {
			c.Routes[i].Delivery = DeliveryDirect
		}
	}
	for i := range c.Schemas.Files {
		if c.Schemas.Files[i].Major == 0 {
			c.Schemas.Files[i].Major = 1
		}
	}
}

// Delivery modes of a route.
const (
	DeliveryDirect = "direct"
	DeliveryOutbox = "outbox"
)
