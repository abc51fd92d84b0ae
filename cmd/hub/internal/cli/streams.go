package cli

import (
	"github.com/spf13/cobra"
)

func addStreamCommands(root *cobra.Command, env *Env, g *globals) {
	root.AddCommand(newTailCmd(env, g), newMigrateCmd(env, g))
}
