// Package cli is the hub binary's command line (cobra): run, init, lint, publish, tail,
// status, the admin API clients (dlq, endpoints, deliveries, outbox, keys, links,
// portal, audit, secrets), token, migrate, schema, modules, version.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/cmd/hub/internal/config"
)

// Version is set at build time with -ldflags "-X .../cli.Version=v1.2.3".
var Version = "dev"

// Env is the process environment as the commands see it; tests replace it.
type Env struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	Lookup         config.Lookup
	// Signals, when set, replaces SIGINT/SIGTERM handling in `run` (tests cancel it).
	Signals func(ctx context.Context) (context.Context, context.CancelFunc)
}

type globals struct {
	logLevel  string
	logFormat string
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Stdout == nil {
		env.Stdout = os.Stdout
	}
	if env.Stderr == nil {
		env.Stderr = os.Stderr
	}
	if env.Stdin == nil {
		env.Stdin = os.Stdin
	}
	if env.Lookup == nil {
		env.Lookup = os.LookupEnv
	}
	root := newRoot(&env)
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	var ee *exitError
	if !errors.As(err, &ee) {
		// cobra's own errors (unknown command or flag, wrong argument count) are usage errors.
		if isUsageError(err) {
			code = ExitUsage
		}
	}
	if !errors.Is(err, errSilent) {
		fmt.Fprintln(env.Stderr, "hub: "+err.Error())
		if code == ExitUsage {
			fmt.Fprintln(env.Stderr, "Run 'hub --help' for usage.")
		}
	}
	return code
}

func isUsageError(err error) bool {
	m := err.Error()
	for _, s := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires ", "flag needs an argument", "invalid argument", "required flag"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func newRoot(env *Env) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "hub",
		Short: "eventhub: move CloudEvents between services",
		Long: `hub runs the event hub from one YAML config file (or its embedded default), and talks
to a running hub's ingress and admin API.

` + exitCodesHelp,
		Example: `  hub run                         # embedded default: SQLite under ./data, ingress :8080, admin :8081 on loopback
  hub init                        # write the embedded default to hub.yaml, to edit
  hub run -c hub.yaml             # your config
  hub lint hub.yaml               # check a config without connecting anywhere
  hub publish --type identity.user.erased --tenant acme --data '{"erasure_id":"era_1","user_id":"u1"}'`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "", "log level of hub run: debug, info, warn, error (default: the config's log.level, else info)")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "", "log format of hub run: text or json (default: the config's log.format, else text)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &exitError{code: ExitUsage, err: err} })
	root.AddCommand(
		newRunCmd(env, g),
		newInitCmd(env),
		newLintCmd(env),
		newModulesCmd(env),
		newVersionCmd(env),
		newPublishCmd(env),
		newSchemaCmd(env),
	)
	addAdminCommands(root, env)
	addStreamCommands(root, env, g)
	return root
}

// newLogger builds the slog logger from flags (winning) and config.
func newLogger(w io.Writer, g *globals, cfg *config.Config) *slog.Logger {
	level, format := config.DefaultLogLevel, config.DefaultLogFormat
	if cfg != nil {
		level, format = cfg.Log.Level, cfg.Log.Format
	}
	if g.logLevel != "" {
		level = g.logLevel
	}
	if g.logFormat != "" {
		format = g.logFormat
	}
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
