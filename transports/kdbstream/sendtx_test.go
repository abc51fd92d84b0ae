package kdbstream

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// sharedSetup is the store's layout on backend b: on SQLite the embedded default (a
// ledger on a file, the stream engine on the ledger's own handle), on PostgreSQL the
// ledger and the engine in one schema, each with its own pool; the transport sharing
// the ledger, and an outbox on it that looks the transport up as "events".
func sharedSetup(t *testing.T, b ledger.Backend) (*ledger.Ledger, *engine.Engine, *Transport, *outbox.Outbox) {
	t.Helper()
	ctx := context.Background()
	lcfg := ledgertest.Config(t, b, ledger.Config{})
	l, err := ledger.Open(ctx, lcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	ecfg := engine.Config{Driver: engine.DriverSQLite, DB: l.DB()}
	if b == ledger.Postgres {
		ecfg = engine.Config{Driver: engine.DriverPostgres, DSN: lcfg.DSN, Schema: lcfg.Schema}
	}
	eng, err := engine.Open(ctx, ecfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	tr, err := New(eng, Config{Stream: "events", DefaultSubject: "unspecified", MaxLen: 3})
	if err != nil {
		t.Fatal(err)
	}
	tr.ShareLedger(l)
	if tr.Ledger() != l {
		t.Fatal("ShareLedger: the transport does not share the ledger whose database its engine runs on")
	}
	ob, err := outbox.New(l, outbox.Config{}, outbox.MapLookup(map[string]hub.Transport{"events": tr}))
	if err != nil {
		t.Fatal(err)
	}
	return l, eng, tr, ob
}

// outboxRows counts the outbox's rows in the ledger (relayed or not).
func outboxRows(t *testing.T, l *ledger.Ledger) int {
	t.Helper()
	var n int
	if err := l.DB().QueryRow(`SELECT COUNT(*) FROM river_job WHERE queue = $1`, outbox.DefaultQueue).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// O1/O4 with kdbstream in the ledger's database (its SQLite file, or its PostgreSQL
// schema): the outbox appends the entries in its own transaction (one durable write per
// event, no row to relay), a blocked reader is woken by the commit, a rollback leaves
// nothing, a caller's own transaction (whose commit the ledger cannot see) falls back
// to rows, and the transport's MAXLEN trim runs once the entries are committed.
func TestO4_KDBStreamEntriesInEnqueueTransaction(t *testing.T) {
	ledgertest.Each(t, testO4KDBInTx)
}

func testO4KDBInTx(t *testing.T, b ledger.Backend) {
	ctx := context.Background()
	l, eng, _, ob := sharedSetup(t, b)

	// The engine's own committer runs on the shared handle too.
	first, _, err := eng.XAdd(ctx, engine.Add{Stream: "events", Values: []string{"k", "v"}})
	if err != nil {
		t.Fatal(err)
	}

	// A reader blocked at the end of the stream, woken by the enqueue's commit: with
	// a 30 s BLOCK a missing wake-up shows as an empty reply. It reads after the first
	// entry's id rather than "$", which a read that started after the enqueue would
	// resolve past the entry.
	read := make(chan []engine.StreamEntries, 1)
	readErr := make(chan error, 1)
	go func() {
		res, err := eng.XRead(ctx, []string{"events"}, []string{first.String()}, 10, 30*time.Second)
		readErr <- err
		read <- res
	}()
	time.Sleep(100 * time.Millisecond) // usually lets the read block first, so the wake-up path is what finds the entry

	ev := transporttest.NewEvent(1)
	if err := ob.Enqueue(ctx, []hub.OutboxItem{{Destination: "events", Event: ev}}); err != nil {
		t.Fatal(err)
	}
	if n, err := eng.XLen(ctx, "events"); err != nil || n != 2 {
		t.Fatalf("XLen after Enqueue = %d, %v; want 2 (the entry is written by the enqueue itself)", n, err)
	}
	if n := outboxRows(t, l); n != 0 {
		t.Fatalf("%d outbox rows for a destination in the ledger's database; want 0", n)
	}
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	res := <-read
	if len(res) != 1 || len(res[0].Entries) != 1 || fieldOf(res[0].Entries[0].Fields, "event_id") != ev.ID {
		t.Fatalf("blocked XREAD got %+v; want the enqueued event (woken by the commit)", res)
	}

	// A failed transaction: neither the caller's work nor the entry.
	boom := errors.New("business rule failed")
	err = l.InTx(ctx, func(tx any) error {
		if err := ob.EnqueueTx(ctx, tx, []hub.OutboxItem{{Destination: "events", Event: transporttest.NewEvent(2)}}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v; want the caller's error", err)
	}
	if n, _ := eng.XLen(ctx, "events"); n != 2 {
		t.Fatalf("XLen after a rollback = %d; want 2", n)
	}

	// The caller's own transaction: rows, relayed later, never entries that nobody
	// would be told about.
	own := func(f func(tx any)) {
		if b == ledger.Postgres {
			tx, err := l.Pool().Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			f(tx)
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			return
		}
		tx, err := l.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		f(tx)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	own(func(tx any) {
		if err := ob.EnqueueTx(ctx, tx, []hub.OutboxItem{{Destination: "events", Event: transporttest.NewEvent(3)}}); err != nil {
			t.Fatal(err)
		}
	})
	if n := outboxRows(t, l); n != 1 {
		t.Fatalf("%d outbox rows after an enqueue in the caller's own transaction; want 1", n)
	}
	if n, _ := eng.XLen(ctx, "events"); n != 2 {
		t.Fatalf("XLen = %d; want 2 (the row is relayed, not appended in a foreign transaction)", n)
	}

	// The transport trims to MAXLEN ~ 3: appends in the transaction never trim in it,
	// the trim runs after the commit once it is due (approximate: at most the slack over).
	var items []hub.OutboxItem
	for i := range 200 {
		items = append(items, hub.OutboxItem{Destination: "events", Event: transporttest.NewEvent(10 + i)})
	}
	if err := ob.Enqueue(ctx, items); err != nil {
		t.Fatal(err)
	}
	if n, _ := eng.XLen(ctx, "events"); n >= 202 || n < 3 {
		t.Fatalf("XLen after 200 more appends under MAXLEN ~ 3 = %d; want the trim to have run", n)
	}
}

// A consumer's relaxed transaction on the shared handle must not leave the ledger's
// connection relaxed: the next outbox commit is fsynced as the ledger promises.
func TestO1_SharedHandleKeepsLedgerDurability(t *testing.T) {
	ctx := context.Background()
	l, eng, _, ob := sharedSetup(t, ledger.SQLite)
	if err := eng.GroupCreate(ctx, "events", "g", "0", true, -1); err != nil {
		t.Fatal(err)
	}
	if err := ob.Enqueue(ctx, []hub.OutboxItem{{Destination: "events", Event: transporttest.NewEvent(1)}}); err != nil {
		t.Fatal(err)
	}
	// XREADGROUP runs relaxed (synchronous NORMAL) on a connection of its own.
	res, err := eng.XReadGroup(ctx, "g", "c", []string{"events"}, []string{">"}, 10, 0, false)
	if err != nil || len(res) != 1 || len(res[0].Entries) != 1 {
		t.Fatalf("XREADGROUP = %+v, %v", res, err)
	}
	var level int
	if err := l.DB().QueryRow("PRAGMA synchronous").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != 2 {
		t.Fatalf("the ledger's connection runs with synchronous=%d after a relaxed read; want 2 (FULL)", level)
	}
}

// An engine on its own file shares nothing: ShareLedger is a no-op and the outbox
// keeps relaying rows.
func TestShareLedgerNeedsTheLedgersHandle(t *testing.T) {
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{DSN: "sqlite://" + filepath.Join(t.TempDir(), "hub.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tr, err := New(openEngine(t, engine.DriverSQLite), Config{Stream: "events"})
	if err != nil {
		t.Fatal(err)
	}
	tr.ShareLedger(l)
	if tr.Ledger() != nil {
		t.Fatal("ShareLedger took a ledger whose handle the engine does not run on")
	}
	if err := tr.SendTx(ctx, nil, []*cloudevent.Event{transporttest.NewEvent(1)}); !errors.Is(err, ledger.ErrNoCommitHook) {
		t.Fatalf("SendTx without a shared ledger = %v; want ledger.ErrNoCommitHook", err)
	}

	// On PostgreSQL: a ledger in another schema of the same database is not the
	// stream's database either.
	pl := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	ptr, err := New(openEngine(t, engine.DriverPostgres), Config{Stream: "events"})
	if err != nil {
		t.Fatal(err)
	}
	ptr.ShareLedger(pl)
	if ptr.Ledger() != nil {
		t.Fatal("ShareLedger took a PostgreSQL ledger in another schema")
	}
}

func fieldOf(fields []string, name string) string {
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i] == name {
			return fields[i+1]
		}
	}
	return ""
}
