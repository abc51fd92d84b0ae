// Command hub runs the event hub from one YAML config file (or its embedded default) and
// operates a running hub: run, lint, publish, tail, dlq, endpoints, deliveries, outbox,
// migrate, schema, modules, version. `hub --help` lists them with examples; see
// docs/hub-binary.md for the config reference and the admin API.
package main

import (
	"context"
	"os"

	"github.com/koder/eventhub/cmd/hub/internal/cli"
	_ "github.com/koder/eventhub/cmd/hub/internal/modules" // every source and transport module
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], cli.Env{}))
}
