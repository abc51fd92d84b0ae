package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/cmd/hub/internal/app"
	"github.com/koder/eventhub/cmd/hub/internal/config"
)

func newMigrateSchemaCmd(env *Env, g *globals) *cobra.Command {
	var path, postgres string
	var force, check bool
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Create or upgrade the hub's tables for the config, and exit",
		Long: `schema runs the DDL that hub run would run at start for this config, and starts
nothing: River's migrations and the hub's own tables in the store's database (ledger,
streams, API keys, console sessions, audit trail, revoked links), the webhook
transport's tables and indexes (waiting for indexes built concurrently on a large
table), kdbstream databases named by URL, the ingress's table of accepted event ids.
It prints each step, then each change it made ("applied  DDL webhook.tables",
"applied  River's migrations 7, 8", "applied  index ...") or "nothing to apply".

Run it as the tables' owner before the first start and at each upgrade; hub run can
then use a role that may only SELECT, INSERT, UPDATE and DELETE (and use the
sequences): each set of statements is recorded with a digest in the table
eventhub_schema, and a process that finds its own recorded runs no DDL. Without this
step the first start of each version must be made as the owner. It is safe to run
again, and while older replicas run (each version's record is kept: an older replica
restarting finds its own). --force runs every set even when recorded, to repair
objects dropped by hand. It fails where a start would only warn: an index on a large
table that this role may not build, or whose concurrent build failed. On SQLite (no
roles) it creates the file's tables, as the first start would.

--check runs nothing and lists what is not at this version (each set of DDL not
recorded, River's migrations not applied, an index or column missing), exiting 1
when there is any: a deployment can wait on it before starting the new version. It
needs only read access (the running role will do), and checks PostgreSQL only: on
SQLite every start runs its DDL (with a SQLite store --check exits 2; kdbstream
databases named by a SQLite URL are left out).

--postgres replaces the config's store.postgres only; a kdbstream transport or source
with a url of its own is migrated with that url, so give it the owner's credentials
(an environment variable in the config, say) for this run.

Exit codes: 0 done (with --check: at this version), 1 invalid config (with --check:
also the schema behind this version, then with "pending" lines on stdout), 2 usage, 3
a database unreachable, refusing the DDL, or (with --check) refusing the role a read
that no migration would mend.`,
		Example: `  hub migrate schema -c hub.yaml --postgres postgres://hub_owner@db/hub
  HUB_PG_URL=postgres://hub_owner@db/hub hub migrate schema -c hub.yaml   # store.postgres: ${HUB_PG_URL}
  hub migrate schema -c hub.yaml --postgres postgres://hub_owner@db/hub --force
  hub migrate schema -c hub.yaml --check   # as the running role: exit 1 while the schema is behind`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := loadPlan(env, g, path, env.Lookup, func(f *config.File) error {
				if postgres == "" {
					return nil
				}
				if f.Config.Store.Postgres == "" {
					return exitf(ExitUsage, "--postgres: the config's store is not on PostgreSQL")
				}
				f.Config.Store.Postgres = postgres
				return nil
			})
			if err != nil {
				return err
			}
			if force && check {
				return exitf(ExitUsage, "--force and --check: choose one")
			}
			if check && plan.File.Config.Store.SQLite != "" {
				return exitf(ExitUsage, "--check: the store is SQLite, which keeps no record and has no roles: every start runs its DDL")
			}
			n := 0
			res, err := app.MigrateSchema(cmd.Context(), plan, app.MigrateOptions{Force: force, Check: check}, func(step string) {
				n++
				if !check {
					fmt.Fprintf(env.Stdout, "ok  %s\n", step)
				}
			})
			if err != nil {
				return exitf(ExitUnavailable, "schema: %v", err)
			}
			if check {
				for _, p := range res.Pending {
					fmt.Fprintf(env.Stdout, "pending  %s\n", p)
				}
				if len(res.Pending) > 0 {
					fmt.Fprintf(env.Stdout, "schema behind this version: %d pending (run hub migrate schema as the tables' owner)\n", len(res.Pending))
					return silent(ExitInvalid)
				}
				fmt.Fprintf(env.Stdout, "schema at this version (%d steps checked)\n", n)
				return nil
			}
			for _, a := range res.Applied {
				fmt.Fprintf(env.Stdout, "applied  %s\n", a)
			}
			if len(res.Applied) == 0 {
				fmt.Fprintf(env.Stdout, "nothing to apply: ")
			}
			fmt.Fprintf(env.Stdout, "schema at this version (%d steps): hub run may use a role without DDL privileges\n", n)
			return nil
		},
	}
	cmd.Flags().StringVarP(&path, "config", "c", "", "config file (default: the embedded default)")
	cmd.Flags().StringVar(&postgres, "postgres", "", "PostgreSQL URL of the tables' owner, in place of the config's store.postgres")
	cmd.Flags().BoolVar(&force, "force", false, "run every set of DDL even when its version is recorded (repairs objects dropped by hand)")
	cmd.Flags().BoolVar(&check, "check", false, "run nothing: list what is not at this version, exit 1 if anything is")
	return cmd
}
