package registry

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/store"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/schema"
	"github.com/koder/eventhub/secrets"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// The lifecycle every module goes through, as in Caddy: a zero value from Info.New,
// strict decoding of its config section, Provision (defaults, environment, no I/O),
// Validate (pure), then Open/Start (I/O), and Close. `hub lint` stops after Validate.

// Provisioner fills defaults and reads what the environment says (KODER_REDIS_URL,
// KODER_EVENT_BUS) without connecting anywhere.
type Provisioner interface {
	Provision(pc *ProvisionContext) error
}

// Validator checks the provisioned config and names the offending field.
type Validator interface {
	Validate() error
}

// TransportModule builds a hub.Transport. Open connects; the hub calls the transport's
// Close when it shuts down, and the runtime closes it too if a later step fails.
type TransportModule interface {
	Module
	Open(ctx context.Context, rt *Runtime) (hub.Transport, error)
}

// SourceModule feeds events into the hub. Start returns once intake runs in the
// background; Close stops intake and waits for in-flight events up to ctx's deadline.
type SourceModule interface {
	Module
	Start(ctx context.Context, rt *Runtime) error
	Close(ctx context.Context) error
}

// SchemaMigrator is a module with tables of its own in a SQL database (the store's or
// one its config names). MigrateSchema creates them, or brings them to this version,
// and returns without starting anything. `hub migrate schema` calls it as the tables'
// owner; Open and Start then find this version's tables recorded and run no DDL, so
// `hub run` can run as a role that may only read and write rows (internal/schemaver).
type SchemaMigrator interface {
	MigrateSchema(ctx context.Context, rt *Runtime) error
}

// Publisher is the hub as sources see it: hub.(*Hub).Publish.
type Publisher interface {
	Publish(ctx context.Context, evs ...*cloudevent.Event) error
}

// ProvisionContext is what a module may consult while provisioning.
type ProvisionContext struct {
	Name   string        // the section's key in config (transports.<name>)
	Env    config.Lookup // environment (a map in tests)
	Store  config.Store  // the shared SQL store, if any
	File   *config.File  // for config-relative paths
	Logger *slog.Logger
}

// Getenv returns an environment variable or "".
func (pc *ProvisionContext) Getenv(name string) string {
	if pc.Env == nil {
		return ""
	}
	v, _ := pc.Env(name)
	return v
}

// Singleton is implemented by modules of which a hub runs at most one section. Build
// reports every further section of the module at its type key; Singleton returns what
// the operator should do instead.
type Singleton interface {
	Singleton() string
}

// Runtime is what modules get when they open (transports) and start (sources). Every
// field is set before the first module receives it: the app builds the hub first, so
// Publisher is there for sources; the store's resources open on first use.
type Runtime struct {
	// Publisher is the hub, for sources.
	Publisher Publisher
	// Schemas is the payload schema registry (E5 version checks of stream sources).
	Schemas *schema.Registry
	Logger  *slog.Logger
	// Registry is the process's Prometheus registry, for modules' own collectors.
	Registry *prometheus.Registry
	// StreamMetrics are the R8 collectors, built once for every stream module.
	StreamMetrics *hub.StreamMetrics
	// Store owns the store-backed resources. Modules reach them through Ledger, KDB,
	// Keys and Keyring; starting, stopping and closing them is the app's (nil: no
	// resources at all).
	Store *store.Store
	// JWT verifies publishers' bearer JWTs (the config's auth.jwt), shared by every
	// listener; nil when none is configured. The app closes it after the sources.
	JWT *auth.JWTVerifier
}

// Keys returns the API key store on the store's database, opened on first use.
func (rt *Runtime) Keys(ctx context.Context) (*auth.KeyStore, error) {
	if rt.Store == nil {
		return nil, store.ErrNone
	}
	return rt.Store.Keys(ctx)
}

// Keyring returns the key ring encrypting secrets at rest, nil when no key is
// configured (see store.Keyring).
func (rt *Runtime) Keyring() (*secrets.Keyring, error) {
	if rt.Store == nil {
		return nil, nil
	}
	return rt.Store.Keyring()
}

// Ledger returns the store's River ledger, opened on first use. The app starts it once
// every module registered its workers and queues, and stops and closes it after them.
func (rt *Runtime) Ledger(ctx context.Context) (*ledger.Ledger, error) {
	if rt.Store == nil {
		return nil, store.ErrNone
	}
	return rt.Store.Ledger(ctx)
}

// KDB returns the kdbstream engine on the store (the same SQLite file or PostgreSQL
// database as the ledger), opened on first use and closed after every module.
func (rt *Runtime) KDB(ctx context.Context) (*engine.Engine, error) {
	if rt.Store == nil {
		return nil, store.ErrNone
	}
	return rt.Store.KDB(ctx)
}
