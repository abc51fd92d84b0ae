package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/cmd/hub/internal/app"
	"github.com/koder/eventhub/cmd/hub/internal/config"
)

func newLintCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "lint [file]",
		Short: "Check a config file without connecting anywhere",
		Long: `lint runs the build path of 'hub run' (decode every section strictly, apply defaults,
validate every module, compile every schema) without opening a connection or a listener,
and prints every problem as file:line:col: path: message. A clean config prints the
modules' notes instead, in the same format (path: note: ...): what they do by default
that the file does not spell out, such as each stream transport's retention (MAXLEN ~
100000 for R1 streams, 7 days for per-category ones) and entry format. Without a file
it checks the embedded default. Environment variables are substituted as 'run' would.

Exit codes: 0 clean, 1 problems found, 2 usage.`,
		Example: `  hub lint hub.yaml
  HUB_ADMIN_TOKEN=x hub lint deploy/hub.yaml && echo ok`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			ps, notes := lint(path, env.Lookup)
			for _, p := range ps {
				fmt.Fprintln(env.Stdout, p.String())
			}
			if len(ps) > 0 {
				fmt.Fprintf(env.Stderr, "%d problem(s)\n", len(ps))
				return silent(ExitInvalid)
			}
			for _, n := range notes {
				fmt.Fprintln(env.Stdout, n)
			}
			return nil
		},
	}
}

// lint returns every problem of the config at path ("" = the embedded default) and,
// when there is none, the modules' notes (effective retention and entry formats).
func lint(path string, lookup config.Lookup) (config.Problems, []string) {
	f, ps := app.LoadConfig(path, lookup)
	if f == nil {
		return ps, nil
	}
	plan, bps := app.Build(f, lookup, nil)
	all := append(ps, bps...)
	all.Sort()
	if len(all) > 0 || plan == nil {
		return all, nil
	}
	return nil, plan.Notes()
}
