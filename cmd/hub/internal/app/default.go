package app

import (
	_ "embed"

	"github.com/koder/eventhub/cmd/hub/internal/config"
)

// DefaultConfig is the config `hub run` uses without -c: everything in one SQLite file
// under ./data, HTTP ingress and admin API on loopback, every event kept in the
// kdbstream stream "events" and offered to registered webhook endpoints. Its
// ${HUB_...} variables are what run's flags (--data-dir, --ingress-addr, --admin-addr)
// set.
//
//go:embed default.yaml
var DefaultConfig []byte

// DefaultConfigName labels problems in the embedded default.
const DefaultConfigName = "(embedded default)"

// LoadConfig reads the config file at path, or the embedded default when path is "".
func LoadConfig(path string, env config.Lookup) (*config.File, config.Problems) {
	if path == "" {
		return config.Parse(DefaultConfigName, "", DefaultConfig, env)
	}
	return config.Load(path, env)
}
