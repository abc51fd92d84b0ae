package webhook

import (
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// countKeys counts the rows of the delivery key table.
func (tb *testBundle) countKeys(t *testing.T) int {
	t.Helper()
	var n int
	if err := tb.l.DB().QueryRowContext(tb.ctx, `SELECT COUNT(*) FROM webhook_delivery_keys`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestH1_DuplicatesInOneBatch: the same event twice in one batch, and in a SendTx, is
// one delivery per endpoint, and no duplicate job is left behind.
func TestH1_DuplicatesInOneBatch(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		tb.endpoint(t, "/a")
		tb.endpoint(t, "/b")
		ev, other := newEvent(t, "user.created"), newEvent(t, "user.created")
		tb.send(t, ev, other, ev)
		if err := tb.l.InTx(tb.ctx, func(tx any) error { return tb.tr.SendTx(tb.ctx, tx, []*cloudevent.Event{other, ev}) }); err != nil {
			t.Fatal(err)
		}
		tb.waitStates(t, DeliveryFilter{}, 4, DeliveryDelivered)
		res, err := tb.l.JobList(tb.ctx, river.NewJobListParams().Kinds(deliveryArgs{}.Kind()).First(100))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Jobs) != 4 {
			t.Fatalf("%d delivery jobs, want 4 (2 events x 2 endpoints)", len(res.Jobs))
		}
		if n := tb.countKeys(t); n != 4 {
			t.Fatalf("%d delivery keys, want 4", n)
		}
	})
}

// TestH1_KeyGoesWithTheDelivery: a delivery's key lives as long as its job. Deleting
// the jobs (as the cleaner and the delivered retention do, in one statement) deletes
// their keys, and the event sent again is delivered again, as with River's own unique
// key before.
func TestH1_KeyGoesWithTheDelivery(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		tb.endpoint(t, "/a")
		tb.endpoint(t, "/b")
		ev := newEvent(t, "user.created")
		tb.send(t, ev)
		tb.waitStates(t, DeliveryFilter{}, 2, DeliveryDelivered)
		tb.send(t, ev) // unique while kept
		if n := len(tb.deliveries(t, DeliveryFilter{})); n != 2 {
			t.Fatalf("%d deliveries after a re-send, want 2", n)
		}
		tb.deleteDeliveriesTakesKeys(t)
		tb.send(t, ev)
		tb.waitStates(t, DeliveryFilter{}, 2, DeliveryDelivered)
		if got := tb.recv.count("/a") + tb.recv.count("/b"); got < 4 {
			t.Fatalf("receivers got %d requests, want the event twice on both", got)
		}
	})
}

// deleteDeliveriesTakesKeys deletes every delivery job in one statement (as the
// cleaner and the delivered retention do) and fails unless their keys went with them.
func (tb *testBundle) deleteDeliveriesTakesKeys(t *testing.T) {
	t.Helper()
	if _, err := tb.l.JobDeleteMany(tb.ctx, river.NewJobDeleteManyParams().Kinds(deliveryArgs{}.Kind())); err != nil {
		t.Fatal(err)
	}
	if n := tb.countKeys(t); n != 0 {
		t.Fatalf("%d delivery keys after their jobs were deleted, want 0", n)
	}
}

// deliveredOnce is a bundle with endpoint /a that got ev delivered.
func deliveredOnce(t *testing.T, b ledger.Backend) (*testBundle, *cloudevent.Event) {
	t.Helper()
	tb := setup(t, b, nil)
	tb.endpoint(t, "/a")
	ev := newEvent(t, "user.created")
	tb.send(t, ev)
	tb.waitStates(t, DeliveryFilter{}, 1, DeliveryDelivered)
	return tb, ev
}

// TestH1_KeysGoWithEmptiedJobs: an operator emptying River's table (TRUNCATE on
// PostgreSQL, which fires no DELETE trigger; DELETE on SQLite, which has no TRUNCATE)
// takes the delivery keys with it, so the events sent before are deliverable again.
func TestH1_KeysGoWithEmptiedJobs(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb, ev := deliveredOnce(t, b)
		empty := `TRUNCATE river_job`
		if b == ledger.SQLite {
			empty = `DELETE FROM river_job`
		}
		if _, err := tb.l.DB().ExecContext(tb.ctx, empty); err != nil {
			t.Fatal(err)
		}
		if n := tb.countKeys(t); n != 0 {
			t.Fatalf("%d delivery keys after %s, want 0", n, empty)
		}
		tb.send(t, ev)
		tb.waitStates(t, DeliveryFilter{}, 1, DeliveryDelivered)
		if got := tb.recv.count("/a"); got < 2 {
			t.Fatalf("receiver got %d requests, want the event again after %s", got, empty)
		}
	})
}

// TestH1_KeysOfAnEarlierVersionMigrate: a key table of the previous version (each key
// holding its job's id, an index on it, on SQLite a trigger reading it) is made this
// version's on start (SQLite: the column dropped; PostgreSQL: left nullable for hubs of
// the previous version during a rolling upgrade), its keys still make re-sends no-ops
// and still go with their jobs.
func TestH1_KeysOfAnEarlierVersionMigrate(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb, ev := deliveredOnce(t, b)
		job := tb.deliveries(t, DeliveryFilter{})[0]
		old := []string{
			`DROP TABLE webhook_delivery_keys`,
			`CREATE TABLE webhook_delivery_keys (event_id TEXT NOT NULL, endpoint_id TEXT NOT NULL,
				job_id BIGINT NOT NULL, PRIMARY KEY (event_id, endpoint_id))`,
			`CREATE INDEX webhook_delivery_keys_job ON webhook_delivery_keys (job_id)`,
		}
		if b == ledger.SQLite {
			old = append([]string{`DROP TRIGGER webhook_delivery_keys_gone`}, old...)
			old = append(old, `CREATE TRIGGER webhook_delivery_keys_gone AFTER DELETE ON river_job
				WHEN old.kind = 'webhook_delivery' BEGIN DELETE FROM webhook_delivery_keys WHERE job_id = old.id; END`)
		}
		for _, q := range old {
			if _, err := tb.l.DB().ExecContext(tb.ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if _, err := tb.l.DB().ExecContext(tb.ctx, `INSERT INTO webhook_delivery_keys (event_id, endpoint_id, job_id) VALUES ($1, $2, $3)`,
			job.EventID, job.EndpointID, job.ID); err != nil {
			t.Fatal(err)
		}
		forgetSchema(t, tb)
		if err := tb.tr.st.migrate(tb.ctx, tb.l); err != nil {
			t.Fatal(err)
		}
		if b == ledger.SQLite {
			var cols int
			if err := tb.l.DB().QueryRowContext(tb.ctx, `SELECT count(*) FROM pragma_table_info('webhook_delivery_keys') WHERE name = 'job_id'`).Scan(&cols); err != nil || cols != 0 {
				t.Fatalf("job_id columns after the migration: %d (%v), want 0", cols, err)
			}
		}
		tb.send(t, ev, newEvent(t, "user.created")) // the old key holds; a new event gets a key of the new shape
		if n := len(tb.deliveries(t, DeliveryFilter{})); n != 2 {
			t.Fatalf("%d deliveries after the migration, want 2 (the re-sent event added nothing)", n)
		}
		tb.waitStates(t, DeliveryFilter{}, 2, DeliveryDelivered)
		tb.deleteDeliveriesTakesKeys(t)
	})
}

// TestH1_KeysBackfilled: deliveries kept from before the key table existed get their
// keys when it is created, so re-sending their events still adds nothing.
func TestH1_KeysBackfilled(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		tb.endpoint(t, "/a")
		evs := []*cloudevent.Event{newEvent(t, "user.created"), newEvent(t, "user.created")}
		tb.send(t, evs...)
		tb.waitStates(t, DeliveryFilter{}, 2, DeliveryDelivered)
		if _, err := tb.l.DB().ExecContext(tb.ctx, `DROP TABLE webhook_delivery_keys`); err != nil {
			t.Fatal(err)
		}
		// What New runs on a database of an earlier version: the table again, backfilled
		// (missing, it is made whatever the record says).
		if err := tb.tr.st.migrate(tb.ctx, tb.l); err != nil {
			t.Fatal(err)
		}
		if n := tb.countKeys(t); n != 2 {
			t.Fatalf("%d keys after the backfill, want 2", n)
		}
		if err := tb.tr.Send(tb.ctx, evs); err != nil {
			t.Fatal(err)
		}
		if n := len(tb.deliveries(t, DeliveryFilter{})); n != 2 {
			t.Fatalf("%d deliveries after re-sending backfilled events, want 2", n)
		}
	})
}

// TestH1_KeysMigrateConcurrently: replicas starting at once on an empty schema all
// create the key table, its function and its trigger without an error (they take
// turns under the schema's DDL lock), and the trigger exists once.
func TestH1_KeysMigrateConcurrently(t *testing.T) {
	t.Parallel()
	for round := range 3 {
		cfg := ledgertest.Config(t, ledger.Postgres, ledger.Config{})
		ctx := testenv.Context(t, 60*time.Second)
		var ls []*ledger.Ledger
		for range 4 {
			l, err := ledger.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			ls = append(ls, l)
		}
		errs := make(chan error, len(ls))
		for _, l := range ls {
			go func() { errs <- (store{db: l.DB()}).migrate(ctx, l) }()
		}
		for range ls {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: a replica's migration failed: %v", round, err)
			}
		}
		var n int
		if err := ls[0].DB().QueryRowContext(ctx, `SELECT count(*) FROM pg_trigger
			WHERE tgname = 'webhook_delivery_keys_gone' AND tgrelid = 'river_job'::regclass`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("round %d: %d delivery-key triggers (%v), want 1", round, n, err)
		}
	}
}

// forgetSchema makes tb's database one of an earlier version, which kept no record of
// its DDL: on PostgreSQL the rows of eventhub_schema go (ledger.ApplySchema then runs
// this version's DDL again); SQLite keeps none.
func forgetSchema(t *testing.T, tb *testBundle) {
	t.Helper()
	if tb.l.Backend() != ledger.Postgres {
		return
	}
	if _, err := tb.l.DB().ExecContext(tb.ctx, `DELETE FROM eventhub_schema`); err != nil {
		t.Fatal(err)
	}
}
