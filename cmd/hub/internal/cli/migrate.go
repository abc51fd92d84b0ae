package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	hubstreams "github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	"github.com/koder/eventhub/transports/redisstream"
)

func newMigrateCmd(env *Env, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Migrations: the hub's database schema, or streams from Redis into kdbstream",
		Example: `  hub migrate schema -c hub.yaml --postgres postgres://hub_owner@db/hub
  hub migrate redis-to-kdb --redis redis://127.0.0.1:6379/0 --stream koder:events:id --dry-run
  hub migrate redis-to-kdb --stream koder:events:id --kdb ./data/hub.db`,
	}
	var redisURL, kdb string
	var streams []string
	var dryRun, asJSON bool
	var batch int
	run := &cobra.Command{
		Use:   "redis-to-kdb",
		Short: "Copy streams with their groups and pending entries from Redis into kdbstream (R9)",
		Long: `redis-to-kdb copies the in-flight state of each --stream from Redis into kdbstream:
entries with their ids, each group's last-delivered id, its consumers, and its pending
entries with owner and delivery count (each stream's dead-letter stream too). It is
resumable (run it again after an interruption: it copies only what is missing) and
verifies the counts at the end. Stop producers and consumers on Redis first; after it,
set KODER_EVENT_BUS=kdb-stream and restart: consumers continue where they were.
Progress goes to stderr: a bar on a terminal, otherwise a line at every tenth.

Exit codes: 0 copied and verified, 1 verification found differences, 3 Redis or the
database unreachable, 2 usage.`,
		Example: `  hub migrate redis-to-kdb --stream koder:events:id --dry-run
  hub migrate redis-to-kdb --redis rediss://user:pass@redis:6379/0 --stream koder:events:id --stream events.user --kdb postgres://hub@db/hub`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(streams) == 0 {
				return exitf(ExitUsage, "give at least one --stream")
			}
			if redisURL == "" {
				redisURL, _ = env.Lookup(redisstream.EnvURL)
			}
			if redisURL == "" {
				return exitf(ExitUsage, "give --redis URL or set %s", redisstream.EnvURL)
			}
			opts, _, err := redisstream.ParseClientURL(redisURL, redisstream.Config{})
			if err != nil {
				return exitf(ExitUsage, "%v", err)
			}
			rdb := opts.NewClient()
			defer rdb.Close()
			if err := rdb.Ping(cmd.Context()).Err(); err != nil {
				return exitf(ExitUnavailable, "redis %s: %v", hubstreams.Redact(redisURL), err)
			}
			eng, closeEng, err := openMigrateTarget(cmd.Context(), env, kdb, dryRun)
			if err != nil {
				return exitf(ExitUnavailable, "kdbstream: %v", err)
			}
			defer closeEng()
			rep, err := kdbstream.Migrate(cmd.Context(), rdb, eng, kdbstream.MigrateOptions{
				Streams: streams, DryRun: dryRun, BatchSize: batch, Progress: migrateProgress(env.Stderr)})
			if rep != nil {
				if asJSON {
					_ = json.NewEncoder(env.Stdout).Encode(rep)
				} else {
					printReport(env, rep)
				}
			}
			if err != nil {
				if rep != nil && !rep.OK() {
					return exitf(ExitInvalid, "verification failed: %v", err)
				}
				return exitf(ExitUnavailable, "%v", err)
			}
			return nil
		},
	}
	fl := run.Flags()
	fl.StringVar(&redisURL, "redis", "", "source Redis URL (default $KODER_REDIS_URL)")
	fl.StringVar(&kdb, "kdb", "", "target kdbstream database: URL or SQLite path (default ./data/hub.db, or $HUB_DATA_DIR/hub.db)")
	fl.StringArrayVar(&streams, "stream", nil, "stream to copy (repeatable)")
	fl.BoolVar(&dryRun, "dry-run", false, "read and report what would be copied, write nothing")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fl.IntVar(&batch, "batch", 0, "XRANGE page size (default 1000)")
	cmd.AddCommand(run, newMigrateSchemaCmd(env, g))
	return cmd
}

func printReport(env *Env, rep *kdbstream.MigrateReport) {
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	verb := "copied"
	if rep.DryRun {
		verb = "would copy"
	}
	fmt.Fprintf(w, "STREAM\t%s\tSOURCE LEN\tTARGET LEN\tGROUPS\tPROBLEMS\n", verb)
	for _, s := range rep.Streams {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\n", s.Stream, s.Copied, s.SourceLength, s.TargetLength, len(s.Groups), len(s.Problems))
		for _, gr := range s.Groups {
			fmt.Fprintf(w, "  group %s\tlast-delivered %s\tconsumers %d\tpending %d\t\t\n", gr.Name, gr.LastDeliveredID, gr.Consumers, gr.Pending)
		}
		for _, p := range s.Problems {
			fmt.Fprintf(w, "  problem: %s\t\t\t\t\t\n", p)
		}
	}
	_ = w.Flush()
}

// migrateProgress is the MigrateOptions.Progress of redis-to-kdb: a progress bar when w
// is a terminal, otherwise plain lines (progressLines), which read well in a log or a
// CI job where a bar's carriage returns pile up on one line.
func migrateProgress(w io.Writer) func(kdbstream.Progress) {
	if isTerminal(w) {
		return progressBar(w)
	}
	return progressLines(w)
}

// isTerminal reports whether w is a character device (a terminal; also /dev/null,
// where drawing a bar costs nothing).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressBar draws entries and pending entries copied of the total on w. The bar is
// created at the first call, when the total is known.
func progressBar(w io.Writer) func(kdbstream.Progress) {
	var bar *progressbar.ProgressBar
	return func(p kdbstream.Progress) {
		if bar == nil {
			bar = progressbar.NewOptions64(p.Total,
				progressbar.OptionSetWriter(w),
				progressbar.OptionSetDescription("migrating"),
				progressbar.OptionShowCount(),
				progressbar.OptionSetWidth(30),
				progressbar.OptionThrottle(0),
				progressbar.OptionOnCompletion(func() { _, _ = io.WriteString(w, "\n") }),
			)
		}
		if p.Total != bar.GetMax64() {
			bar.ChangeMax64(p.Total)
		}
		_ = bar.Set64(p.Done)
	}
}

// progressLines prints one line each time the copy passes a tenth of the total (and
// at its end): at most eleven lines however many pages there are.
func progressLines(w io.Writer) func(kdbstream.Progress) {
	last := int64(-1) // the last tenth printed
	return func(p kdbstream.Progress) {
		pct := int64(100)
		if p.Total > 0 {
			pct = min(p.Done*100/p.Total, 100)
		}
		if pct/10 <= last {
			return
		}
		last = pct / 10
		fmt.Fprintf(w, "migrating %s: %d of %d entries and pending entries (%d%%)\n", p.Stream, p.Done, p.Total, pct)
	}
}

// openMigrateTarget opens the engine redis-to-kdb copies into. A SQLite target that
// does not exist yet is created, its directory too (a fresh kdbstream is the usual
// target); a dry run, which writes nothing, reads a throwaway empty database in its
// place instead, so it reports everything as to be copied.
func openMigrateTarget(ctx context.Context, env *Env, target string, dryRun bool) (*engine.Engine, func(), error) {
	url, path := kdbTarget(env, target)
	cleanup := func() {}
	if path != "" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if dryRun {
				dir, err := os.MkdirTemp("", "hub-migrate-dry-run-")
				if err != nil {
					return nil, nil, err
				}
				cleanup = func() { _ = os.RemoveAll(dir) }
				url = "sqlite://" + filepath.Join(dir, "hub.db")
			} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, nil, err
			}
		}
	}
	eng, err := kdbstream.OpenEngine(ctx, url)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return eng, func() { _ = eng.Close(); cleanup() }, nil
}
