package outbox_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/components/forwarder"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
)

// benchLedger is the ledger configuration the benchmarks run with: the package defaults
// (tuned fetch) and a production-sized pool.
var benchLedger = ledger.Config{MaxConns: 20}

func benchEvent(b *testing.B) *cloudevent.Event {
	ev := cloudevent.New("/orders", "order.created")
	ev.SetTenantID("t1")
	if err := ev.SetData("application/json", map[string]any{"order": "o-1", "total": 4200, "currency": "EUR"}); err != nil {
		b.Fatal(err)
	}
	return ev
}

// reportLatency adds p50/p99 of the per-op durations.
func reportLatency(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(d[len(d)*99/100])/1e6, "p99-ms")
}

// BenchmarkPublishTx: the added cost of writing the outbox row in the caller's
// transaction (O4). hub: BEGIN, a business INSERT, EnqueueTx, COMMIT; base_tx: the same
// transaction without EnqueueTx. One op = one transaction with one event.
func BenchmarkPublishTx(b *testing.B) {
	run := func(b *testing.B, withOutbox bool) {
		l := ledgertest.Open(b, ledger.Postgres, benchLedger)
		o, err := outbox.New(l, outbox.Config{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if _, err := l.Pool().Exec(ctx, "CREATE TABLE orders (id bigint PRIMARY KEY, body text)"); err != nil {
			b.Fatal(err)
		}
		ev := benchEvent(b)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			start := time.Now()
			err := pgx.BeginFunc(ctx, l.Pool(), func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "INSERT INTO orders (id, body) VALUES ($1, $2)", i, "order"); err != nil {
					return err
				}
				if withOutbox {
					return o.EnqueueTx(ctx, tx, []hub.OutboxItem{{Destination: "sink", Event: ev}})
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		reportLatency(b, lat)
	}
	b.Run("hub", func(b *testing.B) { run(b, true) })
	b.Run("base_tx", func(b *testing.B) { run(b, false) })
}

// BenchmarkPublishTxSQLite: BenchmarkPublishTx on the embedded SQLite ledger (*sql.Tx).
func BenchmarkPublishTxSQLite(b *testing.B) {
	run := func(b *testing.B, withOutbox bool) {
		l := ledgertest.Open(b, ledger.SQLite, benchLedger)
		o, err := outbox.New(l, outbox.Config{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if _, err := l.DB().Exec("CREATE TABLE orders (id integer PRIMARY KEY, body text)"); err != nil {
			b.Fatal(err)
		}
		ev := benchEvent(b)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			start := time.Now()
			tx, err := l.DB().BeginTx(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, body) VALUES (?, ?)", i, "order"); err != nil {
				b.Fatal(err)
			}
			if withOutbox {
				if err := o.EnqueueTx(ctx, tx, []hub.OutboxItem{{Destination: "sink", Event: ev}}); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		reportLatency(b, lat)
	}
	b.Run("hub", func(b *testing.B) { run(b, true) })
	b.Run("base_tx", func(b *testing.B) { run(b, false) })
}

// countingSink counts deliveries and closes done at want. Deliveries wait for gate, so
// the relay is already running (client started, first rows fetched) when the clock
// starts: the benchmarks measure relaying, not start-up.
type countingSink struct {
	n    atomic.Int64
	want int64
	gate chan struct{}
	done chan struct{}
}

func newCountingSink(want int) *countingSink {
	return &countingSink{want: int64(want), gate: make(chan struct{}), done: make(chan struct{})}
}

// run opens the gate and waits for every delivery, timing that.
func (s *countingSink) run(b *testing.B) {
	b.ResetTimer()
	start := time.Now()
	close(s.gate)
	s.wait(b)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

func (s *countingSink) add(k int) {
	<-s.gate
	if s.n.Add(int64(k)) == s.want {
		close(s.done)
	}
}

func (s *countingSink) Send(_ context.Context, batch []*cloudevent.Event) error {
	s.add(len(batch))
	return nil
}

func (s *countingSink) Close() error { return nil }

func (s *countingSink) wait(b *testing.B) {
	select {
	case <-s.done:
	case <-time.After(10 * time.Minute):
		b.Fatalf("relayed %d of %d", s.n.Load(), s.want)
	}
}

// noopArgs is a raw River job with the same payload size as an outbox row.
type noopArgs struct {
	Destination string `json:"destination"`
	Event       string `json:"event"`
}

func (noopArgs) Kind() string { return "bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	sink *countingSink
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	w.sink.add(1)
	return nil
}

// BenchmarkRelay: relay throughput on PostgreSQL, rows stored beforehand, timed from
// the moment the running relay's first deliveries are let through to the last one. hub: the outbox relay delivering to an
// in-memory transport; base_river: raw River jobs of the same size with a no-op worker
// on the same database and settings (goal: hub >= 0.8x); base_watermill_forwarder:
// watermill-sql v4's forwarder re-publishing to a no-op publisher (goal: hub >= 5x).
// One op = one event.
func BenchmarkRelay(b *testing.B) {
	ctx := context.Background()
	b.Run("hub", func(b *testing.B) { benchRelayHub(b, ledger.Postgres) })
	b.Run("base_river", func(b *testing.B) { benchRelayRiver(b, ledger.Postgres) })
	b.Run("base_watermill_forwarder", func(b *testing.B) {
		l := ledgertest.Open(b, ledger.Postgres, benchLedger) // a fresh schema (search_path)
		db := wmsql.BeginnerFromStdSQL(l.DB())
		logger := watermill.NopLogger{}
		schema := wmsql.DefaultPostgreSQLSchema{}
		sqlPub, err := wmsql.NewPublisher(db, wmsql.PublisherConfig{SchemaAdapter: schema, AutoInitializeSchema: true}, logger)
		if err != nil {
			b.Fatal(err)
		}
		pub := forwarder.NewPublisher(sqlPub, forwarder.PublisherConfig{})
		raw, _ := json.Marshal(benchEvent(b))
		for chunk := range slices.Chunk(make([]*message.Message, b.N), 1000) {
			for i := range chunk {
				chunk[i] = message.NewMessage(watermill.NewUUID(), raw)
			}
			if err := pub.Publish("sink", chunk...); err != nil {
				b.Fatal(err)
			}
		}
		sink := newCountingSink(b.N)
		poll := 5 * time.Millisecond // as eager as the ledger's fetch cooldown
		sub, err := wmsql.NewSubscriber(db, wmsql.SubscriberConfig{
			SchemaAdapter: schema, OffsetsAdapter: wmsql.DefaultPostgreSQLOffsetsAdapter{},
			InitializeSchema: true, PollInterval: poll, ResendInterval: poll, RetryInterval: poll,
		}, logger)
		if err != nil {
			b.Fatal(err)
		}
		fwd, err := forwarder.NewForwarder(sub, countingPublisher{sink}, logger, forwarder.Config{})
		if err != nil {
			b.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- fwd.Run(runCtx) }()
		<-fwd.Running()
		sink.run(b)
		cancel()
		_ = fwd.Close()
		<-done
	})
}

// BenchmarkRelaySQLite: the same relay comparison on the embedded SQLite ledger.
func BenchmarkRelaySQLite(b *testing.B) {
	b.Run("hub", func(b *testing.B) { benchRelayHub(b, ledger.SQLite) })
	b.Run("base_river", func(b *testing.B) { benchRelayRiver(b, ledger.SQLite) })
}

func benchRelayHub(b *testing.B, backend ledger.Backend) {
	ctx := context.Background()
	l := ledgertest.Open(b, backend, benchLedger)
	sink := newCountingSink(b.N)
	o, err := outbox.New(l, outbox.Config{}, outbox.MapLookup(map[string]hub.Transport{"sink": sink}))
	if err != nil {
		b.Fatal(err)
	}
	ev := benchEvent(b)
	for chunk := range slices.Chunk(make([]hub.OutboxItem, b.N), 5000) {
		for i := range chunk {
			chunk[i] = hub.OutboxItem{Destination: "sink", Event: ev}
		}
		if err := o.Enqueue(ctx, chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Start(ctx); err != nil {
		b.Fatal(err)
	}
	sink.run(b)
}

func benchRelayRiver(b *testing.B, backend ledger.Backend) {
	ctx := context.Background()
	l := ledgertest.Open(b, backend, benchLedger)
	sink := newCountingSink(b.N)
	river.AddWorker(l.Workers(), &noopWorker{sink: sink})
	if err := l.AddQueue(outbox.DefaultQueue, outbox.DefaultWorkers); err != nil {
		b.Fatal(err)
	}
	raw, _ := json.Marshal(benchEvent(b))
	for chunk := range slices.Chunk(make([]river.InsertManyParams, b.N), 5000) {
		for i := range chunk {
			chunk[i] = river.InsertManyParams{Args: noopArgs{Destination: "sink", Event: string(raw)},
				InsertOpts: &river.InsertOpts{Queue: outbox.DefaultQueue}}
		}
		if _, err := l.InsertMany(ctx, chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Start(ctx); err != nil {
		b.Fatal(err)
	}
	sink.run(b)
}

// countingPublisher is the forwarder's destination: it counts and drops.
type countingPublisher struct{ sink *countingSink }

func (p countingPublisher) Publish(_ string, msgs ...*message.Message) error {
	p.sink.add(len(msgs))
	return nil
}

func (p countingPublisher) Close() error { return nil }
