package engine

import (
	"bufio"
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
)

const (
	crashEnvDB   = "KDBSTREAM_CRASH_CHILD_DB"
	crashEnvSync = "KDBSTREAM_CRASH_CHILD_SYNC"
	crashEnvDSN  = "KDBSTREAM_CRASH_CHILD_DSN" // PostgreSQL: the server; DB is then the schema
	crashBatch   = 25
	crashStream  = "crash"
)

// TestR9_CrashDurability: a child process appends in batches from several goroutines
// (group commit) while a consumer reads and acks, printing every acknowledged append;
// the parent kill -9s it mid-stream, reopens the file (or the PostgreSQL schema) and
// checks that every acknowledged id is there, that batches are all-or-nothing (no
// partial entry), and that the pending list and the stream metadata agree with the
// entries.
func TestR9_CrashDurability(t *testing.T) {
	if path := os.Getenv(crashEnvDB); path != "" {
		crashChild(crashConfig(path, os.Getenv(crashEnvSync), os.Getenv(crashEnvDSN)))
		return
	}
	t.Parallel()
	for _, mode := range []string{"FULL", "NORMAL", crashPostgres} {
		name := "synchronous=" + mode
		if mode == crashPostgres {
			name = mode
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runCrash(t, mode)
		})
	}
}

// crashPostgres is the mode that runs the child on PostgreSQL (synchronous_commit on):
// its one-round-trip and pipelined append paths must also answer only committed batches.
const crashPostgres = "postgres"

// crashConfig is the engine configuration of the child and of the reopening parent.
func crashConfig(db, mode, dsn string) Config {
	if mode == crashPostgres {
		return Config{Driver: DriverPostgres, DSN: dsn, Schema: db}
	}
	return Config{Driver: DriverSQLite, DSN: db, Synchronous: mode}
}

func runCrash(t *testing.T, mode string) {
	path, dsn := filepath.Join(t.TempDir(), "crash.db"), ""
	if mode == crashPostgres {
		e := openPostgresT(t, nil) // creates the schema and drops it at the end
		path, dsn = e.cfg.Schema, e.cfg.DSN
	}
	ctx := testenv.Context(t, 2*time.Minute)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestR9_CrashDurability$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnvDB+"="+path, crashEnvSync+"="+mode, crashEnvDSN+"="+dsn)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	batches := map[string]bool{}
	sc := bufio.NewScanner(out)
	const killAfter = 60 // acknowledged batches
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "ACK" {
			continue
		}
		batches[f[1]] = true
		for _, id := range f[2:] {
			acked[id] = true
		}
		if len(batches) == killAfter {
			_ = cmd.Process.Kill() // SIGKILL: no deferred code, no flush
			break
		}
	}
	_ = cmd.Wait()
	if len(batches) < killAfter {
		t.Fatalf("child stopped after %d acknowledged batches before the kill", len(batches))
	}

	e, err := Open(ctx, crashConfig(path, mode, dsn))
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer e.Close()
	es, err := e.XRange(ctx, crashStream, "-", "+", 0)
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	perBatch := map[string]int{}
	for _, en := range es {
		present[en.ID.String()] = true
		m := valuesMap(en.Fields)
		if len(en.Fields) != 8 || m["crc"] != strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(m["payload"]))), 10) {
			t.Fatalf("entry %s is damaged: %q", en.ID, en.Fields)
		}
		perBatch[m["batch"]]++
	}
	missing := 0
	for id := range acked {
		if !present[id] {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged appends are missing after kill -9 (%d entries on disk)", missing, len(acked), len(es))
	}
	for b, n := range perBatch {
		if n != crashBatch {
			t.Fatalf("batch %s has %d of %d entries: a partial batch survived", b, n, crashBatch)
		}
	}
	si, err := e.XInfoStream(ctx, crashStream)
	if err != nil {
		t.Fatal(err)
	}
	if si.Length != int64(len(es)) || si.EntriesAdded != int64(len(es)) {
		t.Fatalf("metadata says length %d, entries-added %d; %d entries on disk", si.Length, si.EntriesAdded, len(es))
	}
	ps, err := e.XPending(ctx, crashStream, "g", PendingQuery{Start: "-", End: "+", Count: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := e.XInfoGroups(ctx, crashStream)
	if err != nil || len(gs) != 1 {
		t.Fatalf("groups %v, %v", gs, err)
	}
	for _, p := range ps {
		if !present[p.ID.String()] || gs[0].LastDeliveredID.Less(p.ID) || p.Consumer != "reader" || p.Deliveries < 1 {
			t.Fatalf("pending entry %+v inconsistent (last delivered %s)", p, gs[0].LastDeliveredID)
		}
	}
	t.Logf("%s: %d appends acknowledged before kill -9, %d entries on disk, %d pending", mode, len(acked), len(es), len(ps))
}

// crashChild appends batches from 4 goroutines and reads/acks from one, until killed.
func crashChild(cfg Config) {
	ctx := context.Background()
	e, err := Open(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := e.GroupCreate(ctx, crashStream, "g", "$", true, -1); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	go func() {
		for i := 0; ; i++ {
			es, err := e.ReadGroup(ctx, crashStream, "g", "reader", ">", 10, time.Second)
			if err != nil {
				continue
			}
			for j, en := range es {
				if (i+j)%2 == 0 {
					_ = e.Ack(ctx, crashStream, "g", en.ID)
				}
			}
		}
	}()
	for g := 0; g < 4; g++ {
		go func() {
			for b := 0; ; b++ {
				batch := fmt.Sprintf("%d.%d", g, b)
				adds := make([]Add, crashBatch)
				for i := range adds {
					payload := strings.Repeat(fmt.Sprintf("%s/%d;", batch, i), 20)
					adds[i] = Add{Stream: crashStream, Values: []string{"batch", batch, "i", strconv.Itoa(i),
						"payload", payload, "crc", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(payload))), 10)}}
				}
				res, err := e.Append(ctx, adds)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				ids := make([]string, len(res))
				for i, r := range res {
					ids[i] = r.ID.String()
				}
				mu.Lock()
				fmt.Fprintln(w, "ACK", batch, strings.Join(ids, " "))
				w.Flush()
				mu.Unlock()
			}
		}()
	}
	select {}
}
