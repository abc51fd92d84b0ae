// Command e2ebench measures the hub binary end to end: events posted to its ingress
// until a webhook receiver on loopback has them, beside a raw loop of signed POSTs to
// the same receiver measured in the same run. `make bench-e2e` runs it.
//
// It builds the binary once, then for each store (PostgreSQL, the embedded SQLite
// default) starts a fresh hub process on a fresh database per scenario:
//
//   - batched: -events events in requests of -batch, from -posters concurrent posters;
//   - single: the same events one per request (with group commit on and, on PostgreSQL,
//     off, so the ratio of the two is measured in one run);
//   - latency: single-event posts at a fixed offered rate (-rate events/s for
//     -latency-for), each event's post -> receive time taken from its scheduled send
//     time, so a stalled hub cannot hide its queueing (no coordinated omission).
//
// Accepted/s counts 202s over the posting time; delivered/s counts distinct events at
// the receiver over the time from the first post to the last arrival. CPU is the hub
// process's user+system time per 1,000 delivered events (/proc/<pid>/stat), peak RSS
// its VmHWM. The receiver does nothing expensive: it records the arrival time of each
// event id (the Webhook-Id header) and answers 204.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
)

type options struct {
	events     int
	batch      int
	posters    int
	rate       int
	latencyFor time.Duration
	runs       int
	stores     string
	scenarios  string
	ingressCfg string
	webhookCfg string
	storeCfg   string
	pgURL      string
	hubBin     string
	timeout    time.Duration
	keep       bool
	pprofDir   string
	pprofFor   time.Duration
	pprofAfter time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.events, "events", 20000, "events per throughput scenario")
	flag.IntVar(&o.batch, "batch", 100, "events per request in the batched scenario")
	flag.IntVar(&o.posters, "posters", 16, "concurrent posters in the throughput scenarios")
	flag.IntVar(&o.rate, "rate", 1000, "offered load of the latency scenario, events/s")
	flag.DurationVar(&o.latencyFor, "latency-for", 10*time.Second, "length of the latency scenario")
	flag.IntVar(&o.runs, "runs", 1, "batched runs on one hub and database (steady state: compare the last with the first)")
	flag.StringVar(&o.stores, "stores", "postgres,sqlite", "stores to measure, comma-separated: postgres, sqlite (the embedded default), sqlite-split (the same with store.streams_sqlite)")
	flag.StringVar(&o.ingressCfg, "ingress-config", "", "extra YAML keys of the ingress on PostgreSQL, inline (e.g. 'group_commit: {committers: 8}'), for tuning")
	flag.StringVar(&o.storeCfg, "store-config", "", "extra YAML keys of the store, inline (e.g. 'ledger: {completed_retention: 1m}'), for tuning (the embedded default is then started from its config written out, with these keys)")
	flag.StringVar(&o.webhookCfg, "webhook-config", "", "extra YAML keys of the webhook transport, inline (e.g. 'workers: 400'), for tuning (the embedded default is then started from its config written out, with these keys)")
	flag.StringVar(&o.scenarios, "scenarios", "batched,single,latency", "scenarios to run, comma-separated")
	flag.StringVar(&o.pgURL, "postgres", envOr("HUB_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL URL (a fresh schema per hub)")
	flag.StringVar(&o.hubBin, "hub", "", "hub binary (default: go build ./cmd/hub once)")
	flag.DurationVar(&o.timeout, "timeout", 3*time.Minute, "longest wait for a scenario's deliveries")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (configs, SQLite files, hub logs)")
	flag.StringVar(&o.pprofDir, "pprof", "", "write a CPU profile of the hub per scenario into this directory (the hub's metrics listener with pprof on; the embedded default is then started from the same config written out)")
	flag.DurationVar(&o.pprofFor, "pprof-for", 8*time.Second, "length of each CPU profile, from the scenario's start")
	flag.DurationVar(&o.pprofAfter, "pprof-after", 0, "start each CPU profile this long after the scenario's start (with -runs: profile the later runs of a steady-state measurement)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "e2ebench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.pprofDir != "" {
		if err := os.MkdirAll(o.pprofDir, 0o755); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp("", "e2ebench-")
	if err != nil {
		return err
	}
	if o.keep {
		progress("work directory %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	if o.hubBin == "" {
		o.hubBin = filepath.Join(work, "hub")
		progress("building the hub binary")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", o.hubBin, "./cmd/hub")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/hub: %w", err)
		}
	}
	recv, err := startReceiver()
	if err != nil {
		return err
	}
	defer recv.close()

	var rep report
	progress("raw signed-POST loop: %d events", o.events)
	rep.raw = rawLoop(recv, o.events)
	progress("raw loop: %.0f events/s", rep.raw)

	b := &bench{o: o, work: work, recv: recv}
	for _, st := range strings.Split(o.stores, ",") {
		st = strings.TrimSpace(st)
		if st == "" {
			continue
		}
		res, err := b.store(ctx, st)
		if err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
		rep.stores = append(rep.stores, res)
	}
	rep.print(os.Stdout, o)
	return nil
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
