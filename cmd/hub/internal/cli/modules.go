package cli

import (
	"fmt"
	"runtime/debug"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
)

func newModulesCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "modules",
		Short:   "List the sources and transports this binary can build from config",
		Example: "  hub modules",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			for _, m := range registry.Modules() {
				fmt.Fprintf(w, "%s\t%s\n", m.ID, m.Doc)
			}
			return w.Flush()
		},
	}
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
