package cli

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/cmd/hub/internal/app"
	"github.com/koder/eventhub/cmd/hub/internal/config"
)

type runFlags struct {
	config      string
	dataDir     string
	ingressAddr string
	adminAddr   string
}

func newRunCmd(env *Env, g *globals) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the hub (from -c FILE, or the embedded default)",
		Long: `run builds the hub from the config file (-c) or, without one, from the embedded default:
one SQLite file under ./data holding the kdbstream stream "events" and the River ledger,
the HTTP ingress on 127.0.0.1:8080 (POST /events), the admin API on 127.0.0.1:8081, and
the webhook transport (register endpoints through the admin API), whose signing secrets
are encrypted with the key file ./data/hub.db.key (made on the first run).

--data-dir, --ingress-addr and --admin-addr set HUB_DATA_DIR, HUB_INGRESS_ADDR and
HUB_ADMIN_ADDR, which the embedded default (and any config that references them) uses.

SIGINT or SIGTERM stops intake at once, drains in-flight work for up to the config's
shutdown_timeout and exits 0 (6 when the drain did not finish in time). Events the
ingress acknowledged (202) on an outbox route are in the database and are delivered
after a restart.`,
		Example: `  hub run
  hub run --data-dir /var/lib/hub --ingress-addr 127.0.0.1:9080
  hub run -c hub.yaml --log-format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runHub(cmd.Context(), env, g, f) },
	}
	cmd.Flags().StringVarP(&f.config, "config", "c", "", "config file (default: the embedded default)")
	cmd.Flags().StringVar(&f.dataDir, "data-dir", "", "sets HUB_DATA_DIR (embedded default: ./data)")
	cmd.Flags().StringVar(&f.ingressAddr, "ingress-addr", "", "sets HUB_INGRESS_ADDR (embedded default: 127.0.0.1:8080)")
	cmd.Flags().StringVar(&f.adminAddr, "admin-addr", "", "sets HUB_ADMIN_ADDR (embedded default: 127.0.0.1:8081)")
	return cmd
}

// overlay returns a lookup where the flags' variables win over the environment.
func overlay(base config.Lookup, vars map[string]string) config.Lookup {
	return func(k string) (string, bool) {
		if v, ok := vars[k]; ok && v != "" {
			return v, true
		}
		return base(k)
	}
}

func runHub(ctx context.Context, env *Env, g *globals, f *runFlags) error {
	lookup := overlay(env.Lookup, map[string]string{"HUB_DATA_DIR": f.dataDir, "HUB_INGRESS_ADDR": f.ingressAddr, "HUB_ADMIN_ADDR": f.adminAddr})
	plan, err := loadPlan(env, g, f.config, lookup, nil)
	if err != nil {
		return err
	}
	file, logger := plan.File, plan.Logger
	sigCtx, stop := signalContext(ctx, env)
	defer stop()
	a, err := app.Start(sigCtx, plan)
	if err != nil {
		logger.Error("start failed", "error", err)
		return exitf(ExitUnavailable, "start: %v", err)
	}
	<-sigCtx.Done()
	logger.Info("shutting down", "timeout", file.Config.ShutdownTimeout.String())
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), file.Config.ShutdownTimeout)
	defer cancel()
	if err := a.Close(closeCtx); err != nil {
		logger.Error("shutdown incomplete", "error", err)
		return exitf(ExitFailure, "shutdown: %v", err)
	}
	logger.Info("stopped")
	return nil
}

func signalContext(ctx context.Context, env *Env) (context.Context, context.CancelFunc) {
	if env.Signals != nil {
		return env.Signals(ctx)
	}
	return signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
}

// loadPlan reads the config file (the embedded default without one), lets edit change
// it (nil: nothing to change), and builds the plan, printing every problem found on the
// way: the start of `hub run` and of `hub migrate schema`.
func loadPlan(env *Env, g *globals, path string, lookup config.Lookup, edit func(*config.File) error) (*app.Plan, error) {
	invalid := func(ps config.Problems) error {
		for _, p := range ps {
			fmt.Fprintln(env.Stderr, p.String())
		}
		return silent(ExitInvalid)
	}
	file, ps := app.LoadConfig(path, lookup)
	if file == nil || len(ps) > 0 {
		return nil, invalid(ps)
	}
	if edit != nil {
		if err := edit(file); err != nil {
			return nil, err
		}
	}
	logger := app.WithInstance(newLogger(env.Stderr, g, &file.Config), &file.Config)
	plan, ps := app.Build(file, lookup, logger)
	if len(ps) > 0 {
		return nil, invalid(ps)
	}
	return plan, nil
}
