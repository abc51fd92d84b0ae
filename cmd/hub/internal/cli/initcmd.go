package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/cmd/hub/internal/app"
)

// DefaultInitFile is where init writes without an argument.
const DefaultInitFile = "hub.yaml"

func newInitCmd(env *Env) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init [file]",
		Short: "Write the embedded default config to a file, to edit and run with -c",
		Long: `init writes the config 'hub run' uses without -c (one SQLite file under ./data, the
ingress and the admin API on loopback, every event kept in the kdbstream stream
"events" and offered to webhook endpoints) to file (default ` + DefaultInitFile + `; - writes
to standard output), so a deployment starts from what already runs. It refuses to
replace a file that exists unless --force. 'hub lint FILE' checks the edits;
docs/hub-binary.md lists every key.

Exit codes: 0 written, 1 the file exists (without --force), 2 usage, 6 it could not be
written.`,
		Example: `  hub init && hub run -c hub.yaml
  hub init deploy/hub.yaml
  hub init - | less`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := DefaultInitFile
			if len(args) == 1 {
				path = args[0]
			}
			if path == "-" {
				_, err := env.Stdout.Write(app.DefaultConfig)
				return err
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(path, flags, 0o644)
			if errors.Is(err, fs.ErrExist) {
				return exitf(ExitInvalid, "%s exists: edit it, or --force to replace it with the default", path)
			}
			if err != nil {
				return exitf(ExitFailure, "%v", err)
			}
			if _, err := f.Write(app.DefaultConfig); err != nil {
				f.Close()
				return exitf(ExitFailure, "write %s: %v", path, err)
			}
			if err := f.Close(); err != nil {
				return exitf(ExitFailure, "write %s: %v", path, err)
			}
			fmt.Fprintf(env.Stdout, "wrote %s: check it with 'hub lint %s', run it with 'hub run -c %s'\n", path, path, path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace the file when it exists")
	return cmd
}
