package cli

import (
	"github.com/spf13/cobra"
)

func newMigrateCmd(env *Env, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Migrations between buses",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "redis-to-kdb",
		Short: "Copy streams with their groups and pending entries from Redis into kdbstream",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitf(ExitUnavailable, "migrate is not available in this build")
		},
	})
	return cmd
}
