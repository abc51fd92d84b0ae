package app

import (
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
)

// Notes returns what the plan's modules say about themselves (registry.Noter), each as
// "file:line:col: transports.<name>: note: ...", located at the module's section, in
// file order: what `hub lint` prints for a clean config.
func (p *Plan) Notes() []string {
	var out []string
	add := func(section, name string, m any) {
		n, ok := m.(registry.Noter)
		if !ok {
			return
		}
		var mod config.Module
		if section == "transports" {
			mod = p.File.Config.Transports[name]
		} else {
			mod = p.File.Config.Sources[name]
		}
		for _, note := range n.Notes() {
			out = append(out, at(p.File, mod.Node, section+"."+name, "note: %s", note).String())
		}
	}
	for _, s := range p.Sources {
		add("sources", s.Name, s.Module)
	}
	for _, s := range p.Transports {
		add("transports", s.Name, s.Module)
	}
	return out
}
