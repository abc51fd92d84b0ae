// Package registry is the hub binary's module registry, in the manner of Caddy's: each
// source and transport the binary can build from config registers itself by a
// namespaced ID ("transport.redisstream", "source.http") from one small file under
// cmd/hub/internal/modules, and the build path looks modules up by the section's type.
//
// Registration lives in the binary, never in the library packages, so importing
// github.com/koder/eventhub/transports/... has no side effects.
package registry

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// ID is a namespaced module name: "<namespace>.<name>".
type ID string

// Namespace is the part before the last dot ("transport").
func (id ID) Namespace() string {
	i := strings.LastIndexByte(string(id), '.')
	if i < 0 {
		return ""
	}
	return string(id[:i])
}

// Name is the part after the last dot ("redisstream"), the value of `type:` in config.
func (id ID) Name() string { return string(id[strings.LastIndexByte(string(id), '.')+1:]) }

// Namespaces the binary builds from config.
const (
	NSTransport = "transport"
	NSSource    = "source"
)

// Info describes a module: its ID, a constructor of a zero value (no side effects: it
// only allocates) and a one-line description for `hub modules`.
type Info struct {
	ID  ID
	New func() Module
	Doc string
}

// Module is implemented by every registered module.
type Module interface {
	HubModule() Info
}

var (
	mu      sync.RWMutex
	modules = map[ID]Info{}
)

// Register adds a module. It panics on an empty, malformed or duplicate ID or a nil
// constructor: those are programming errors found on the first run of the binary.
func Register(m Module) {
	info := m.HubModule()
	if info.ID == "" {
		panic("registry: module ID missing")
	}
	if info.New == nil {
		panic(fmt.Sprintf("registry: module %s: New is nil", info.ID))
	}
	switch info.ID.Namespace() {
	case NSTransport, NSSource:
	default:
		panic(fmt.Sprintf("registry: module %s: unknown namespace %q", info.ID, info.ID.Namespace()))
	}
	if info.ID.Name() == "" {
		panic(fmt.Sprintf("registry: module %s: empty name", info.ID))
	}
	if v := info.New(); v == nil {
		panic(fmt.Sprintf("registry: module %s: New returned nil", info.ID))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := modules[info.ID]; dup {
		panic(fmt.Sprintf("registry: module already registered: %s", info.ID))
	}
	modules[info.ID] = info
}

// Lookup returns a registered module.
func Lookup(id ID) (Info, bool) {
	mu.RLock()
	defer mu.RUnlock()
	i, ok := modules[id]
	return i, ok
}

// Modules lists every registered module, sorted by ID.
func Modules() []Info {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Info, 0, len(modules))
	for _, i := range modules {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// Names lists the module names in a namespace, sorted, for error messages.
func Names(ns string) []string {
	var out []string
	for _, i := range Modules() {
		if i.ID.Namespace() == ns {
			out = append(out, i.ID.Name())
		}
	}
	return out
}
