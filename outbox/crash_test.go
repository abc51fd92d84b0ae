package outbox_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
)

// The crash test re-executes this test binary as relay processes (the os/exec helper
// process pattern); these variables tell TestMain to run a relay instead of the tests.
const (
	envRelay  = "OUTBOX_TEST_RELAY_NAME"
	envDSN    = "OUTBOX_TEST_RELAY_DSN"
	envSchema = "OUTBOX_TEST_RELAY_SCHEMA"
	envDelay  = "OUTBOX_TEST_RELAY_DELAY"
)

// Short lease for the crash test: a killed relay's rows are taken after ~1.2 s.
var crashLedger = ledger.Config{
	NoMigrate: true, JobTimeout: 500 * time.Millisecond,
	RescueStuckJobsAfter: time.Second, RescueInterval: 200 * time.Millisecond,
	FetchPollInterval: 50 * time.Millisecond,
}

func TestMain(m *testing.M) {
	if name := os.Getenv(envRelay); name != "" {
		os.Exit(relayMain(name))
	}
	goleak.VerifyTestMain(m)
}

// relayMain is a relay process: it delivers to a table in PostgreSQL (one row per
// delivery, so the parent counts them) until its stdin closes or it is killed.
func relayMain(name string) int {
	ctx := context.Background()
	delay, _ := time.ParseDuration(os.Getenv(envDelay))
	cfg := crashLedger
	cfg.DSN, cfg.Schema, cfg.MaxConns = os.Getenv(envDSN), os.Getenv(envSchema), 8
	l, err := ledger.Open(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	dest := &tableSink{l: l, relay: name, delay: delay}
	if _, err := outbox.New(l, outbox.Config{Workers: 10, BackoffBase: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond},
		outbox.MapLookup(map[string]hub.Transport{"sink": dest})); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	if err := l.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	fmt.Println("relay started")
	_, _ = io.Copy(io.Discard, os.Stdin) // the parent closes stdin to stop us
	if err := l.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "relay: close:", err)
		return 1
	}
	return 0
}

// tableSink records each delivery in PostgreSQL, then takes delay, so that a relay
// holds rows (delivered or not) when it is killed.
type tableSink struct {
	l     *ledger.Ledger
	relay string
	delay time.Duration
}

func (s *tableSink) Send(ctx context.Context, batch []*cloudevent.Event) error {
	for _, ev := range batch {
		if _, err := s.l.Pool().Exec(ctx, "INSERT INTO deliveries (event_id, relay) VALUES ($1, $2)", ev.ID, s.relay); err != nil {
			return hub.Wrap(hub.Unavailable, err)
		}
	}
	time.Sleep(s.delay)
	return nil
}

func (s *tableSink) Close() error { return nil }

type relayProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	output *bytes.Buffer
}

func startRelay(t *testing.T, name string, cfg ledger.Config, delay time.Duration) *relayProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRelay+"="+name, envDSN+"="+cfg.DSN, envSchema+"="+cfg.Schema, envDelay+"="+delay.String())
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &relayProc{cmd: cmd, stdin: stdin, output: out}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		if t.Failed() {
			t.Logf("relay %s output:\n%s", name, p.output.String())
		}
	})
	return p
}

// TestO2_KilledRelayRowsTakenOver: two relay processes share the outbox; one is
// killed with SIGKILL while it holds rows; the other delivers them after the lease.
// No row is lost; duplicates are only rows the killed relay held (at-least-once).
func TestO2_KilledRelayRowsTakenOver(t *testing.T) {
	t.Parallel()
	cfg := ledgertest.Config(t, ledger.Postgres, ledger.Config{})
	ctx := testenv.Context(t, 60*time.Second)
	l, err := ledger.Open(ctx, cfg) // migrates the schema both relays use
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if _, err := l.Pool().Exec(ctx, "CREATE TABLE deliveries (event_id text NOT NULL, relay text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	o, err := outbox.New(l, outbox.Config{}, nil) // enqueue only: this process does not relay
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	if err := o.Enqueue(ctx, items(events(t, n), "sink")); err != nil {
		t.Fatal(err)
	}

	count := func(q string) int {
		var c int
		if err := l.Pool().QueryRow(ctx, q).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	jobs := l.Table("river_job")

	// The victim starts first, so it surely holds rows however slowly processes start
	// on a busy machine; the survivor joins, then the victim dies mid-batch.
	victim := startRelay(t, "victim", cfg, 50*time.Millisecond)
	testenv.WaitFor(t, 30*time.Second, "the victim to deliver and hold rows", func() bool {
		return count("SELECT count(*) FROM deliveries WHERE relay = 'victim'") >= 20
	})
	survivor := startRelay(t, "survivor", cfg, 50*time.Millisecond)
	if err := victim.cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup at all
		t.Fatal(err)
	}
	_ = victim.cmd.Wait()
	// Rows running at the kill: the victim's (and the survivor's in-flight ones).
	held := count("SELECT count(*) FROM " + jobs + " WHERE state = 'running'")

	testenv.WaitFor(t, 30*time.Second, "every event delivered and every row completed", func() bool {
		return count("SELECT count(DISTINCT event_id) FROM deliveries") == n &&
			count("SELECT count(*) FROM "+jobs+" WHERE state <> 'completed'") == 0
	})
	distinct := count("SELECT count(DISTINCT event_id) FROM deliveries")
	total := count("SELECT count(*) FROM deliveries")
	byVictim := count("SELECT count(*) FROM deliveries WHERE relay = 'victim'")
	rescued := count("SELECT count(*) FROM " + jobs + " WHERE attempt > 1")
	t.Logf("published %d, delivered %d distinct in %d deliveries (victim %d); rows running at the kill %d, rows attempted more than once %d",
		n, distinct, total, byVictim, held, rescued)
	if distinct != n {
		t.Fatalf("lost events: published %d, delivered %d distinct", n, distinct)
	}
	if held == 0 || rescued == 0 {
		t.Fatalf("the kill did not leave rows to take over (running at kill %d, re-attempted %d): the test proved nothing", held, rescued)
	}
	if dup := total - distinct; dup > held {
		t.Fatalf("%d duplicate deliveries, more than the %d rows running when the victim died", dup, held)
	}
	// At-least-once, not more: an event is delivered twice only when the victim had
	// delivered it and died before recording that.
	if bad := count("SELECT count(*) FROM (SELECT event_id FROM deliveries GROUP BY event_id " +
		"HAVING count(*) > 1 AND bool_and(relay <> 'victim')) d"); bad != 0 {
		t.Fatalf("%d events delivered more than once without the victim involved", bad)
	}

	if err := survivor.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := survivor.cmd.Wait(); err != nil {
		t.Fatalf("survivor exit: %v\n%s", err, survivor.output)
	}
}
