package schema

import (
	"embed"
	"sync"
)

// catalog holds seed 001's identity catalogue plus identity.user.erased (seed 000), one
// file per type and MAJOR version. Shipping them embedded means a fresh hub rejects a
// malformed user.created without any configuration.
//
//go:embed catalog/*.json
var catalog embed.FS

var (
	builtinOnce sync.Once
	builtinErr  error
	builtinReg  *Registry
)

// Builtin returns a new registry preloaded with the built-in catalogue. Each call returns
// a fresh registry, so callers may Define more types without affecting others.
func Builtin() *Registry {
	builtinOnce.Do(func() {
		builtinReg = NewRegistry()
		builtinErr = builtinReg.loadFS(catalog, "catalog", true)
	})
	if builtinErr != nil { // the embedded files are pinned by tests; this is a build defect
		panic(builtinErr)
	}
	r := NewRegistry()
	builtinReg.mu.RLock()
	defer builtinReg.mu.RUnlock()
	for t, te := range builtinReg.types {
		cp := &typeEntry{majors: make(map[int]*entry, len(te.majors))}
		for m, e := range te.majors {
			cp.majors[m] = e // compiled schemas are immutable and safe to share
		}
		r.types[t] = cp
	}
	return r
}
