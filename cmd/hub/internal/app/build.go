// Package app turns a config file into a running hub: Build runs the whole build path up
// to Validate without connecting (what `hub lint` runs), Start opens and starts
// everything in order, and Close stops it in reverse.
package app

import (
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/schema"
)

// Plan is a config whose every module is decoded, provisioned and validated: nothing is
// open yet. Start turns it into a running App.
type Plan struct {
	File       *config.File
	Env        config.Lookup
	Logger     *slog.Logger
	Schemas    *schema.Registry
	Transports []Section[registry.TransportModule]
	Sources    []Section[registry.SourceModule]
}

// Section is one built module with its config name.
type Section[M any] struct {
	Name   string
	ID     registry.ID
	Module M
}

// Build runs the build path up to Validate. Every problem found is returned, each
// located in the file; a Plan is returned only when there is none.
func Build(f *config.File, env config.Lookup, logger *slog.Logger) (*Plan, config.Problems) {
	if env == nil {
		env = os.LookupEnv
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Plan{File: f, Env: env, Logger: logger}
	var ps config.Problems
	p.Schemas, ps = LoadSchemas(f)
	singletons := map[registry.ID]bool{}
	for _, name := range sectionOrder(f.Config.Transports) {
		sec := f.Config.Transports[name]
		if p, ok := singleton(f, singletons, registry.NSTransport, "transports."+name, sec); !ok {
			ps = append(ps, p)
			continue
		}
		m, id, mps := buildModule[registry.TransportModule](f, env, logger, registry.NSTransport, "transports", name, sec)
		ps = append(ps, mps...)
		if len(mps) == 0 {
			p.Transports = append(p.Transports, Section[registry.TransportModule]{name, id, m})
		}
	}
	for _, name := range sectionOrder(f.Config.Sources) {
		sec := f.Config.Sources[name]
		if p, ok := singleton(f, singletons, registry.NSSource, "sources."+name, sec); !ok {
			ps = append(ps, p)
			continue
		}
		m, id, mps := buildModule[registry.SourceModule](f, env, logger, registry.NSSource, "sources", name, sec)
		ps = append(ps, mps...)
		if len(mps) == 0 {
			p.Sources = append(p.Sources, Section[registry.SourceModule]{name, id, m})
		}
	}
	if len(ps) > 0 {
		ps.Sort()
		return nil, ps
	}
	return p, nil
}

// sectionOrder returns section names in file order, so modules start (and problems
// print) in the order the operator wrote them.
func sectionOrder(m map[string]config.Module) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := m[names[i]].Node, m[names[j]].Node
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return names[i] < names[j]
	})
	return names
}

// singleton reports, for a module that declares itself registry.Singleton, every
// section after its first, at the section's type key.
func singleton(f *config.File, seen map[registry.ID]bool, ns, path string, sec config.Module) (config.Problem, bool) {
	id := registry.ID(ns + "." + sec.Type)
	info, ok := registry.Lookup(id)
	if !ok {
		return config.Problem{}, true // reported by buildModule
	}
	one, ok := info.New().(registry.Singleton)
	if !ok {
		return config.Problem{}, true
	}
	if seen[id] {
		return at(f, valueNode(sec.Node, "type"), path+".type", "only one %s %s per hub: %s", sec.Type, ns, one.Singleton()), false
	}
	seen[id] = true
	return config.Problem{}, true
}

func buildModule[M any](f *config.File, env config.Lookup, logger *slog.Logger, ns, section, name string, sec config.Module) (M, registry.ID, config.Problems) {
	var zero M
	path := section + "." + name
	id := registry.ID(ns + "." + sec.Type)
	info, ok := registry.Lookup(id)
	if !ok {
		known := registry.Names(ns)
		return zero, id, config.Problems{at(f, valueNode(sec.Node, "type"), path+".type",
			"unknown %s type %q%s (known: %s)", ns, sec.Type, config.DidYouMean(sec.Type, known), strings.Join(known, ", "))}
	}
	mod := info.New()
	typed, ok := mod.(M)
	if !ok {
		return zero, id, config.Problems{at(f, sec.Node, path, "module %s cannot be used as a %s", id, ns)}
	}
	dec := f.Decoder()
	if !dec.Decode(sec.Body(), path, mod) {
		return zero, id, dec.Problems
	}
	if pv, ok := mod.(registry.Provisioner); ok {
		pc := &registry.ProvisionContext{Name: name, Env: env, Store: f.Config.Store, File: f, Logger: logger.With("module", string(id), "name", name)}
		if err := pv.Provision(pc); err != nil {
			return zero, id, f.ProblemsAt(path, "provision", err)
		}
	}
	if v, ok := mod.(registry.Validator); ok {
		if err := v.Validate(); err != nil {
			return zero, id, f.ProblemsAt(path, "", err)
		}
	}
	return typed, id, nil
}

func valueNode(m *yaml.Node, key string) *yaml.Node {
	if m == nil {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func at(f *config.File, n *yaml.Node, path, format string, args ...any) config.Problem {
	p := config.Problem{File: f.Name, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	return p
}

// LoadSchemas builds the registry: the built-in catalogue unless switched off, then the
// config's files and directories (a later definition of a type and major wins).
func LoadSchemas(f *config.File) (*schema.Registry, config.Problems) {
	c := f.Config.Schemas
	reg := schema.NewRegistry()
	if c.BuiltinSchemas() {
		reg = schema.Builtin()
	}
	var ps config.Problems
	for i, sf := range c.Files {
		if sf.Type == "" || sf.Path == "" {
			continue // reported by config validation
		}
		path := fmt.Sprintf("schemas.files[%d].path", i)
		b, err := os.ReadFile(f.Resolve(sf.Path))
		if err == nil {
			err = reg.Define(sf.Type, sf.Major, b)
		}
		if err != nil {
			ps = append(ps, f.Problem(path, "%v", err))
		}
	}
	for i, d := range c.Dirs {
		if err := reg.LoadFS(os.DirFS(f.Resolve(d)), "."); err != nil {
			ps = append(ps, f.Problem(fmt.Sprintf("schemas.dirs[%d]", i), "%v", err))
		}
	}
	return reg, ps
}
