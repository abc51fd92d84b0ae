package cli

import (
	"fmt"
	"runtime/debug"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
)

func newModulesCmd(env *Env) *cobra.Command {
	var keys bool
	cmd := &cobra.Command{
		Use:   "modules",
		Short: "List the sources and transports this binary can build from config",
		Long: `modules lists every registered module by its ID; a config section's "type: x" in
transports (sources) selects transport.x (source.x). --keys adds the keys each module's
section accepts (anything else is a lint error).`,
		Example: "  hub modules\n  hub modules --keys",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			for _, m := range registry.Modules() {
				fmt.Fprintf(w, "%s\t%s\n", m.ID, m.Doc)
				if keys {
					for _, k := range config.Keys(m.New()) {
						fmt.Fprintf(w, "    %s\t%s\n", k[0], k[1])
					}
				}
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&keys, "keys", false, "also list each module's config keys and types")
	return cmd
}

func newVersionCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version and the Go toolchain",
		Example: "  hub version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := Version
			if bi, ok := debug.ReadBuildInfo(); ok {
				if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
					v = bi.Main.Version
				}
				fmt.Fprintf(env.Stdout, "hub %s (%s)\n", v, bi.GoVersion)
				return nil
			}
			fmt.Fprintf(env.Stdout, "hub %s\n", v)
			return nil
		},
	}
}
