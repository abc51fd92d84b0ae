package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
)

const (
	crashEnv    = "KDBSTREAM_CRASH_CHILD" // the child's database, as JSON crashTarget
	crashBatch  = 25
	crashStream = "crash"
)

// TestR9_CrashDurability: a child process appends in batches from several goroutines
// (group commit) while a consumer reads and acks, printing every acknowledged append;
// the parent kill -9s it mid-stream, reopens the file (or the PostgreSQL schema) and
// checks that every acknowledged id is there, that batches are all-or-nothing (no
// partial entry), and that the pending list and the stream metadata agree with the
// entries. It runs per database of testDialects and per commit setting of each
// (SQLite/synchronous=FULL, SQLite/synchronous=NORMAL, Postgres/synchronous_commit=on:
// PostgreSQL's one-round-trip and pipelined append paths must also answer only
// committed batches).
func TestR9_CrashDurability(t *testing.T) {
	if target := os.Getenv(crashEnv); target != "" {
		crashChild(target)
		return
	}
	t.Parallel()
	forEachDialect(t, func(t *testing.T, d testDialect) {
		for _, m := range d.durability {
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				runCrash(t, d.config(t, m.mod))
			})
		}
	})
}

// crashTarget is the database the child writes to (the part of Config that names it).
type crashTarget struct {
	Driver, DSN, Schema, Synchronous string
}

func (c crashTarget) config() Config {
	return Config{Driver: c.Driver, DSN: c.DSN, Schema: c.Schema, Synchronous: c.Synchronous}
}

func runCrash(t *testing.T, cfg Config) {
	target, err := json.Marshal(crashTarget{Driver: cfg.Driver, DSN: cfg.DSN, Schema: cfg.Schema, Synchronous: cfg.Synchronous})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Context(t, 2*time.Minute)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestR9_CrashDurability$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+string(target))
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

	e, err := Open(ctx, cfg)
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
	t.Logf("%s: %d appends acknowledged before kill -9, %d entries on disk, %d pending", t.Name(), len(acked), len(es), len(ps))
}

// crashChild appends batches from 4 goroutines and reads/acks from one, until killed.
func crashChild(target string) {
	var c crashTarget
	if err := json.Unmarshal([]byte(target), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	e, err := Open(ctx, c.config())
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
