package cli

import (
	"github.com/spf13/cobra"
)

func newTailCmd(env *Env, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "tail",
		Short: "Follow a stream (kdbstream or Redis) and print each event",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitf(ExitUnavailable, "tail is not available in this build")
		},
	}
}
