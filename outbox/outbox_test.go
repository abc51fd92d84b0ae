package outbox_test

import (
	"bytes"
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
)

// sink is a destination that records deliveries per event id and fails on demand.
type sink struct {
	mu       sync.Mutex
	got      map[string]int
	last     map[string]*cloudevent.Event
	attempts int
	fail     error // returned by Send while set
	changed  chan struct{}
}

func newSink() *sink {
	return &sink{got: map[string]int{}, last: map[string]*cloudevent.Event{}, changed: make(chan struct{}, 1)}
}

func (s *sink) Send(ctx context.Context, batch []*cloudevent.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts++
	defer s.signal()
	if s.fail != nil {
		return s.fail
	}
	for _, ev := range batch {
		s.got[ev.ID]++
		s.last[ev.ID] = ev.Clone()
	}
	return nil
}

func (s *sink) Close() error { return nil }

func (s *sink) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *sink) setFail(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

// counts returns distinct events delivered, total deliveries and total attempts.
func (s *sink) counts() (distinct, total, attempts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.got {
		total += n
	}
	return len(s.got), total, s.attempts
}

func (s *sink) deliveries(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[id]
}

// waitUntil waits for cond on the sink, woken by each Send.
func (s *sink) waitUntil(t *testing.T, what string, cond func(distinct, total, attempts int) bool) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		d, n, a := s.counts()
		if cond(d, n, a) {
			return
		}
		select {
		case <-s.changed:
		case <-time.After(100 * time.Millisecond): // also re-check on a slow clock
		case <-timeout:
			t.Fatalf("timed out waiting for %s: %d distinct events delivered, %d deliveries, %d attempts", what, d, n, a)
		}
	}
}

type testBundle struct {
	ledger *ledger.Ledger
	sink   *sink
	other  *sink
}

// fastRetry keeps retries in milliseconds so tests run quickly.
var fastRetry = outbox.Config{Workers: 10, BackoffBase: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond, MaxAttempts: 100}

func setup(t *testing.T, b ledger.Backend, cfg outbox.Config) (*outbox.Outbox, *testBundle) {
	t.Helper()
	l := ledgertest.Open(t, b, ledger.Config{})
	bundle := &testBundle{ledger: l, sink: newSink(), other: newSink()}
	o, err := outbox.New(l, cfg, outbox.MapLookup(map[string]hub.Transport{"sink": bundle.sink, "other": bundle.other}))
	if err != nil {
		t.Fatal(err)
	}
	createBusinessTable(t, l)
	return o, bundle
}

func start(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func createBusinessTable(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	if _, err := l.DB().Exec("CREATE TABLE orders (id text PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
}

// insertOrder is the business change of the caller's transaction.
func insertOrder(ctx context.Context, l *ledger.Ledger, tx *sql.Tx, id string) error {
	q := "INSERT INTO orders (id) VALUES ($1)"
	if l.Backend() == ledger.SQLite {
		q = "INSERT INTO orders (id) VALUES (?)"
	}
	_, err := tx.ExecContext(ctx, q, id)
	return err
}

func countOrders(t *testing.T, l *ledger.Ledger) int {
	t.Helper()
	var n int
	if err := l.DB().QueryRow("SELECT count(*) FROM orders").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func newEvent(t *testing.T, i int) *cloudevent.Event {
	t.Helper()
	ev := cloudevent.New("/orders", "order.created")
	if err := ev.SetData("application/json", map[string]any{"n": i, "z": "last", "a": "first"}); err != nil {
		t.Fatal(err)
	}
	ev.SetTenantID("t1")
	return ev
}

func items(evs []*cloudevent.Event, dest string) []hub.OutboxItem {
	out := make([]hub.OutboxItem, len(evs))
	for i, ev := range evs {
		out[i] = hub.OutboxItem{Destination: dest, Event: ev}
	}
	return out
}

func events(t *testing.T, n int) []*cloudevent.Event {
	evs := make([]*cloudevent.Event, n)
	for i := range evs {
		evs[i] = newEvent(t, i)
	}
	return evs
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		t.Run("O4_RollbackSendsNothing", func(t *testing.T) {
			t.Parallel()
			o, bundle := setup(t, b, fastRetry)
			ctx := testenv.Context(t, 30*time.Second)
			start(t, bundle.ledger)
			rolledBack := newEvent(t, 1)
			tx, err := bundle.ledger.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := insertOrder(ctx, bundle.ledger, tx, "o1"); err != nil {
				t.Fatal(err)
			}
			if err := o.EnqueueTx(ctx, tx, items([]*cloudevent.Event{rolledBack}, "sink")); err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			// A committed marker event after the rolled-back one: once it is delivered,
			// the rolled-back one had every chance to be delivered too.
			marker := newEvent(t, 2)
			if err := o.Enqueue(ctx, items([]*cloudevent.Event{marker}, "sink")); err != nil {
				t.Fatal(err)
			}
			bundle.sink.waitUntil(t, "the marker", func(d, _, _ int) bool { return d >= 1 })
			if n := bundle.sink.deliveries(rolledBack.ID); n != 0 {
				t.Fatalf("rolled-back event delivered %d times", n)
			}
			if n := countOrders(t, bundle.ledger); n != 0 {
				t.Fatalf("%d orders after rollback", n)
			}
		})

		t.Run("O4_CommitSendsOnce", func(t *testing.T) {
			t.Parallel()
			o, bundle := setup(t, b, fastRetry)
			ctx := testenv.Context(t, 30*time.Second)
			start(t, bundle.ledger)
			evs := events(t, 10)
			tx, err := bundle.ledger.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := insertOrder(ctx, bundle.ledger, tx, "o1"); err != nil {
				t.Fatal(err)
			}
			// One row per destination (O1): every event to both.
			if err := o.EnqueueTx(ctx, tx, append(items(evs, "sink"), items(evs, "other")...)); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			bundle.sink.waitUntil(t, "10 events at sink", func(d, _, _ int) bool { return d == 10 })
			bundle.other.waitUntil(t, "10 events at other", func(d, _, _ int) bool { return d == 10 })
			waitStats(t, o, func(s []outbox.DestinationStats) bool { return len(s) == 0 })
			for _, s := range []*sink{bundle.sink, bundle.other} {
				if d, n, _ := s.counts(); d != 10 || n != 10 {
					t.Fatalf("%d distinct events, %d deliveries; want 10 each exactly once", d, n)
				}
			}
			// The event arrives unchanged, data bytes included (jsonb would reorder keys).
			bundle.sink.mu.Lock()
			got := bundle.sink.last[evs[0].ID]
			bundle.sink.mu.Unlock()
			if !bytes.Equal(got.Data, evs[0].Data) || got.TenantID() != "t1" || !got.Time.Equal(evs[0].Time) || got.Source != evs[0].Source {
				t.Fatalf("delivered event differs:\n got %+v\nwant %+v", got, evs[0])
			}
		})

		if b == ledger.Postgres {
			t.Run("O4_CommitSendsOncePgxTx", func(t *testing.T) {
				t.Parallel()
				o, bundle := setup(t, b, fastRetry)
				ctx := testenv.Context(t, 30*time.Second)
				start(t, bundle.ledger)
				tx, err := bundle.ledger.Pool().Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(ctx, "INSERT INTO orders (id) VALUES ($1)", "o1"); err != nil {
					t.Fatal(err)
				}
				if err := o.EnqueueTx(ctx, tx, items(events(t, 3), "sink")); err != nil {
					t.Fatal(err)
				}
				if err := tx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				bundle.sink.waitUntil(t, "3 events", func(d, n, _ int) bool { return d == 3 && n == 3 })
			})
		}

		t.Run("O1_MissingTableFailsEnqueueTx", func(t *testing.T) {
			t.Parallel()
			l := ledgertest.Open(t, b, ledger.Config{NoMigrate: true})
			o, err := outbox.New(l, fastRetry, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b == ledger.Postgres { // the schema exists, River's tables do not
				if _, err := l.DB().Exec("CREATE SCHEMA " + l.Schema()); err != nil {
					t.Fatal(err)
				}
			}
			createBusinessTable(t, l)
			ctx := testenv.Context(t, 30*time.Second)
			tx, err := l.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = o.EnqueueTx(ctx, tx, items(events(t, 1), "sink"))
			_ = tx.Rollback() // before Enqueue: SQLite's one connection is the tx's
			if err == nil {
				t.Fatal("EnqueueTx without the outbox table succeeded")
			}
			if c := hub.Code(err); c != hub.FailedPrecondition {
				t.Fatalf("code %s (%v), want FailedPrecondition", c, err)
			}
			if err := o.Enqueue(ctx, items(events(t, 1), "sink")); err == nil {
				t.Fatal("Enqueue without the outbox table succeeded")
			}
		})

		t.Run("O1_DatabaseDownFailsEnqueue", func(t *testing.T) {
			t.Parallel()
			o, bundle := setup(t, b, fastRetry)
			ctx := testenv.Context(t, 30*time.Second)
			tx, err := bundle.ledger.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b == ledger.Postgres {
				// Kill the transaction's server process from another connection.
				var pid int
				if err := tx.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
					t.Fatal(err)
				}
				if _, err := bundle.ledger.Pool().Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
					t.Fatal(err)
				}
			} else {
				// The caller's transaction is already over (its connection is gone for it).
				if err := tx.Rollback(); err != nil {
					t.Fatal(err)
				}
			}
			err = o.EnqueueTx(ctx, tx, items(events(t, 1), "sink"))
			if err == nil {
				t.Fatal("EnqueueTx on a dead transaction succeeded")
			}
			t.Logf("EnqueueTx on a dead transaction: %s: %v", hub.Code(err), err)
			_ = tx.Rollback()

			// The ledger's own database gone: Enqueue fails rather than dropping events.
			if err := bundle.ledger.Close(); err != nil {
				t.Fatal(err)
			}
			if err := o.Enqueue(ctx, items(events(t, 1), "sink")); err == nil {
				t.Fatal("Enqueue with the database closed succeeded")
			}
		})

		t.Run("O3_TransportDownThenRecovers", func(t *testing.T) {
			t.Parallel()
			o, bundle := setup(t, b, fastRetry)
			ctx := testenv.Context(t, 60*time.Second)
			bundle.sink.setFail(hub.Errorf(hub.Unavailable, "sink is down"))
			start(t, bundle.ledger)
			const n = 30
			if err := o.Enqueue(ctx, items(events(t, n), "sink")); err != nil {
				t.Fatal(err)
			}
			// Down long enough for every row to fail at least twice.
			bundle.sink.waitUntil(t, "failed attempts", func(_, _, a int) bool { return a >= 2*n })
			bundle.sink.setFail(nil)
			bundle.sink.waitUntil(t, "every event after recovery", func(d, _, _ int) bool { return d == n })
			d, total, attempts := bundle.sink.counts()
			t.Logf("%d events published, %d delivered (%d deliveries) after %d attempts", n, d, total, attempts)
		})

		t.Run("O3_DeadLetterAndResend", func(t *testing.T) {
			t.Parallel()
			cfg := fastRetry
			cfg.MaxAttempts = 2
			o, bundle := setup(t, b, cfg)
			ctx := testenv.Context(t, 60*time.Second)
			bundle.sink.setFail(hub.Errorf(hub.Unavailable, "sink is down"))
			start(t, bundle.ledger)
			evs := events(t, 4)
			if err := o.Enqueue(ctx, items(evs, "sink")); err != nil {
				t.Fatal(err)
			}
			waitStats(t, o, func(s []outbox.DestinationStats) bool { return len(s) == 1 && s[0].Dead == 4 })
			dead, err := o.Dead(ctx, outbox.DeadQuery{Destination: "sink"})
			if err != nil {
				t.Fatal(err)
			}
			if len(dead) != 4 {
				t.Fatalf("%d dead rows, want 4", len(dead))
			}
			for _, r := range dead {
				if r.State != "discarded" || r.Attempts != 2 || len(r.Errors) != 2 || r.EventType != "order.created" {
					t.Fatalf("dead row %+v: want discarded after 2 attempts with 2 errors", r)
				}
			}
			if other, _ := o.Dead(ctx, outbox.DeadQuery{Destination: "other"}); len(other) != 0 {
				t.Fatalf("%d dead rows for another destination", len(other))
			}

			bundle.sink.setFail(nil)
			// Resend one row...
			if err := o.Resend(ctx, dead[0].ID); err != nil {
				t.Fatal(err)
			}
			bundle.sink.waitUntil(t, "the resent row", func(d, _, _ int) bool { return d == 1 })
			if bundle.sink.deliveries(dead[0].EventID) != 1 {
				t.Fatal("the resent row is not the delivered one")
			}
			// ...then the rest in bulk by destination.
			n, err := o.ResendDead(ctx, "sink")
			if err != nil || n != 3 {
				t.Fatalf("ResendDead = %d, %v; want 3", n, err)
			}
			bundle.sink.waitUntil(t, "every resent row", func(d, _, _ int) bool { return d == 4 })
			if err := o.Resend(ctx, 1<<40); hub.Code(err) != hub.NotFound {
				t.Fatalf("Resend(missing) = %v, want NotFound", err)
			}
		})

		t.Run("O3_PermanentErrorDeadLettersAtOnce", func(t *testing.T) {
			t.Parallel()
			o, bundle := setup(t, b, fastRetry)
			ctx := testenv.Context(t, 30*time.Second)
			bundle.sink.setFail(hub.Errorf(hub.InvalidArgument, "sink rejects it"))
			start(t, bundle.ledger)
			if err := o.Enqueue(ctx, append(items(events(t, 1), "sink"), items(events(t, 1), "nowhere")...)); err != nil {
				t.Fatal(err)
			}
			waitStats(t, o, func(s []outbox.DestinationStats) bool {
				return len(s) == 2 && s[0].Dead == 1 && s[1].Dead == 1
			})
			dead, err := o.Dead(ctx, outbox.DeadQuery{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range dead {
				if r.Attempts != 1 || r.State != "cancelled" || r.LastError() == "" {
					t.Fatalf("dead row %+v: want cancelled after 1 attempt with the reason", r)
				}
			}
			if _, _, a := bundle.sink.counts(); a != 1 {
				t.Fatalf("%d attempts on a permanent error, want 1", a)
			}
			n, err := o.PurgeDead(ctx, "nowhere")
			if err != nil || n != 1 {
				t.Fatalf("PurgeDead = %d, %v; want 1", n, err)
			}
			waitStats(t, o, func(s []outbox.DestinationStats) bool { return len(s) == 1 && s[0].Destination == "sink" })
		})

		t.Run("O2_ParallelRelays", func(t *testing.T) {
			t.Parallel()
			o, bundle := setup(t, b, fastRetry)
			ctx := testenv.Context(t, 60*time.Second)
			// A second relay on the same database, delivering to the same sink.
			cfg := bundle.ledger.Config()
			cfg.NoMigrate = true
			l2, err := ledger.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l2.Close() })
			if _, err := outbox.New(l2, fastRetry, outbox.MapLookup(map[string]hub.Transport{"sink": bundle.sink})); err != nil {
				t.Fatal(err)
			}
			start(t, bundle.ledger)
			start(t, l2)
			n := 200
			if b == ledger.SQLite {
				n = 50 // two writers on one file take turns through busy_timeout
			}
			if err := o.Enqueue(ctx, items(events(t, n), "sink")); err != nil {
				t.Fatal(err)
			}
			bundle.sink.waitUntil(t, "every event", func(d, _, _ int) bool { return d == n })
			d, total, _ := bundle.sink.counts()
			if total != d {
				t.Fatalf("%d events, %d deliveries: duplicates without any crash", d, total)
			}
		})

		t.Run("InvalidItems", func(t *testing.T) {
			t.Parallel()
			o, _ := setup(t, b, fastRetry)
			ctx := testenv.Context(t, 10*time.Second)
			for _, it := range []hub.OutboxItem{{Destination: "", Event: newEvent(t, 1)}, {Destination: "sink"}} {
				if err := o.Enqueue(ctx, []hub.OutboxItem{it}); hub.Code(err) != hub.InvalidArgument {
					t.Errorf("Enqueue(%+v) = %v, want InvalidArgument", it, err)
				}
			}
			if err := o.EnqueueTx(ctx, "not a tx", items(events(t, 1), "sink")); hub.Code(err) != hub.InvalidArgument {
				t.Errorf("EnqueueTx(string) = %v, want InvalidArgument", err)
			}
		})
	})
}

func waitStats(t *testing.T, o *outbox.Outbox, cond func([]outbox.DestinationStats) bool) {
	t.Helper()
	var last []outbox.DestinationStats
	var lastErr error
	testenv.WaitFor(t, 20*time.Second, "outbox stats", func() bool {
		last, lastErr = o.Stats(context.Background())
		return lastErr == nil && cond(last)
	})
	if lastErr != nil || !cond(last) {
		t.Fatalf("stats %+v, %v", last, lastErr)
	}
}
