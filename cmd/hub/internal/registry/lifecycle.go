package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/schema"
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

// Runtime is what modules share at start: the hub, the logger, the Prometheus
// registry, and shared resources (the SQL store, the kdbstream engine, the River
// ledger) opened once, by whichever module needs them first, and closed last.
type Runtime struct {
	Publisher  Publisher // the hub, for sources
	Schemas    *schema.Registry
	Logger     *slog.Logger
	Registry   *prometheus.Registry
	Store      config.Store
	File       *config.File
	StreamMets *hub.StreamMetrics

	mu      sync.Mutex
	shared  map[string]any
	closers []namedCloser
}

type namedCloser struct {
	name string
	c    io.Closer
}

// Shared returns the resource under key, opening it with open the first time. The
// closer open returns (may be nil) runs when the runtime closes, after every module.
func (rt *Runtime) Shared(key string, open func() (any, io.Closer, error)) (any, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if v, ok := rt.shared[key]; ok {
		return v, nil
	}
	v, c, err := open()
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", key, err)
	}
	if rt.shared == nil {
		rt.shared = map[string]any{}
	}
	rt.shared[key] = v
	if c != nil {
		rt.closers = append(rt.closers, namedCloser{key, c})
	}
	return v, nil
}

// Lookup returns a shared resource opened earlier, if any.
func (rt *Runtime) Lookup(key string) (any, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	v, ok := rt.shared[key]
	return v, ok
}

// OnClose registers a closer that runs with the shared resources, in reverse order.
func (rt *Runtime) OnClose(name string, c io.Closer) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.closers = append(rt.closers, namedCloser{name, c})
}

// CloseShared closes the shared resources in reverse opening order.
func (rt *Runtime) CloseShared() error {
	rt.mu.Lock()
	cs := rt.closers
	rt.closers = nil
	rt.mu.Unlock()
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		if err := cs[i].c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", cs[i].name, err))
		}
	}
	return errors.Join(errs...)
}

// CloserFunc adapts a function to io.Closer.
type CloserFunc func() error

// Close calls f.
func (f CloserFunc) Close() error { return f() }
