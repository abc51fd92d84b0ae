package outbox_test

import (
	"bytes"
	"context"
	"database/sql"
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

// crashLedger is the relays' ledger: the defaults (a one-minute lease), so the test
// shows what presence buys, not a shortened lease.
var crashLedger = ledger.Config{NoMigrate: true}

// drainBound is what "within seconds" means for the restarted relay with the default
// ledger configuration: the takeover (PostgreSQL: PresenceGrace 3 s + one presence
// period; SQLite: the first sweep at Start) plus working the rest, far below the
// one-minute lease the held rows waited for before.
const drainBound = 15 * time.Second

func TestMain(m *testing.M) {
	if name := os.Getenv(envRelay); name != "" {
		os.Exit(relayMain(name))
	}
	goleak.VerifyTestMain(m)
}

// relayMain is a relay process: it delivers to a table in the ledger's database (one
// row per attempt, so the parent counts deliveries and sees overlapping attempts) until
// its stdin closes or it is killed.
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
	dest := &tableSink{db: l.DB(), relay: name, delay: delay}
	if _, err := outbox.New(l, outbox.Config{Workers: 10, BackoffBase: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond},
		outbox.MapLookup(map[string]hub.Transport{"sink": dest})); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	if err := l.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	fmt.Println("relay started as", l.WorkerID())
	_, _ = io.Copy(io.Discard, os.Stdin) // the parent closes stdin to stop us
	if err := l.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "relay: close:", err)
		return 1
	}
	return 0
}

// tableSink records each attempt in the ledger's database when it starts, takes
// delay, then records its end: a relay killed meanwhile leaves attempts without an
// end, so that it holds rows (delivered or not) when it dies.
type tableSink struct {
	db    *sql.DB
	relay string
	delay time.Duration
}

func (s *tableSink) Send(ctx context.Context, batch []*cloudevent.Event) error {
	for _, ev := range batch {
		var id int64
		if err := s.db.QueryRowContext(ctx, "INSERT INTO deliveries (event_id, relay, started_us) VALUES ($1, $2, $3) RETURNING id",
			ev.ID, s.relay, time.Now().UnixMicro()).Scan(&id); err != nil {
			return hub.Wrap(hub.Unavailable, err)
		}
		time.Sleep(s.delay)
		if _, err := s.db.ExecContext(ctx, "UPDATE deliveries SET ended_us = $2 WHERE id = $1", id, time.Now().UnixMicro()); err != nil {
			return hub.Wrap(hub.Unavailable, err)
		}
	}
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

// TestO2_KilledRelayRowsTakenOver: a relay process is killed with SIGKILL while it
// holds rows; a relay started after it (a restarted hub) takes them over within
// seconds with the ledger's defaults (presence, not the one-minute lease) and drains
// the outbox. No row is lost; duplicates are only rows the killed relay held
// (at-least-once); no row is ever sent by two attempts at once. Both stores.
func TestO2_KilledRelayRowsTakenOver(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		cfg := ledgertest.Config(t, b, ledger.Config{})
		ctx := testenv.Context(t, 90*time.Second)
		l, err := ledger.Open(ctx, cfg) // migrates the schema (file) both relays use
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		idCol := "id BIGSERIAL PRIMARY KEY"
		if b == ledger.SQLite {
			idCol = "id INTEGER PRIMARY KEY"
		}
		if _, err := l.DB().ExecContext(ctx, "CREATE TABLE deliveries ("+idCol+
			", event_id TEXT NOT NULL, relay TEXT NOT NULL, started_us BIGINT NOT NULL, ended_us BIGINT)"); err != nil {
			t.Fatal(err)
		}
		o, err := outbox.New(l, outbox.Config{}, nil) // enqueue only: this process does not relay
		if err != nil {
			t.Fatal(err)
		}
		// SQLite takes turns on one writer (and is ~15x slower under -race): fewer rows
		// there, so the drain time measures the takeover rather than the throughput.
		n := 300
		if b == ledger.SQLite {
			n = 100
		}
		if err := o.Enqueue(ctx, items(events(t, n), "sink")); err != nil {
			t.Fatal(err)
		}

		count := func(q string) int {
			var c int
			if err := l.DB().QueryRowContext(ctx, q).Scan(&c); err != nil {
				t.Fatal(err)
			}
			return c
		}
		jobs := l.Table("river_job")

		// The victim alone works the outbox until it surely holds rows however slowly
		// processes start on a busy machine, then dies mid-batch.
		victim := startRelay(t, "victim", cfg, 50*time.Millisecond)
		testenv.WaitFor(t, 30*time.Second, "the victim to deliver and hold rows", func() bool {
			return count("SELECT count(*) FROM deliveries WHERE relay = 'victim'") >= 20
		})
		if err := victim.cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup at all
			t.Fatal(err)
		}
		_ = victim.cmd.Wait()
		killedAt := time.Now()
		held := count("SELECT count(*) FROM " + jobs + " WHERE state = 'running'")
		left := count("SELECT count(*) FROM " + jobs + " WHERE state <> 'completed'")

		restarted := time.Now()
		survivor := startRelay(t, "restarted", cfg, 50*time.Millisecond)
		testenv.WaitFor(t, 60*time.Second, "every event delivered and every row completed", func() bool {
			return count("SELECT count(DISTINCT event_id) FROM deliveries") == n &&
				count("SELECT count(*) FROM "+jobs+" WHERE state <> 'completed'") == 0
		})
		drain := time.Since(restarted)
		t.Logf("drained %d jobs in %.1fs after restart (%d were running in the killed relay; lease %s)",
			left, drain.Seconds(), held, l.Config().RescueStuckJobsAfter)

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
		if drain >= drainBound {
			t.Fatalf("drained %.1fs after restart, want below %s: the killed relay's rows waited for the lease", drain.Seconds(), drainBound)
		}
		if dup := total - distinct; dup > held {
			t.Fatalf("%d duplicate deliveries, more than the %d rows running when the victim died", dup, held)
		}
		// At-least-once, not more: an event is delivered twice only when the victim had
		// delivered it and died before recording that.
		if bad := count("SELECT count(*) FROM (SELECT event_id FROM deliveries GROUP BY event_id " +
			"HAVING count(*) > 1 AND sum(CASE WHEN relay = 'victim' THEN 1 ELSE 0 END) = 0) d"); bad != 0 {
			t.Fatalf("%d events delivered more than once without the victim involved", bad)
		}
		// Never twice at the same time: an attempt the victim never finished ended when
		// it was killed.
		if bad := count(fmt.Sprintf("SELECT count(*) FROM deliveries a JOIN deliveries b ON a.event_id = b.event_id AND a.id < b.id "+
			"WHERE a.started_us < coalesce(b.ended_us, %[1]d) AND b.started_us < coalesce(a.ended_us, %[1]d)", killedAt.UnixMicro())); bad != 0 {
			t.Fatalf("%d pairs of attempts of one row overlapped", bad)
		}

		if err := survivor.stdin.Close(); err != nil {
			t.Fatal(err)
		}
		if err := survivor.cmd.Wait(); err != nil {
			t.Fatalf("restarted relay exit: %v\n%s", err, survivor.output)
		}
	})
}
