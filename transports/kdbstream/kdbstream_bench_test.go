package kdbstream

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	"github.com/koder/eventhub/transports/redisstream"
)

// Durability of the figures: SQLite runs in WAL mode with synchronous=FULL (every
// acknowledged commit fsynced), the engine's default; base_plain_insert uses the same
// pragmas. PostgreSQL runs with the server's synchronous_commit=on for appends. Redis
// runs as configured on the machine (no AOF, no snapshots in the test setup). One op is
// one event.

const benchBatch = 100

func benchEvents(b *testing.B, n int) []*cloudevent.Event {
	evs := make([]*cloudevent.Event, n)
	for i := range evs {
		evs[i] = streamtest.NewEvent(b, "user.updated", fmt.Sprintf("u%d", i))
	}
	return evs
}

// sendAll sends evs in batches of 100 and reports events/s.
func sendAll(b *testing.B, send func(ctx context.Context, batch []*cloudevent.Event) error, evs []*cloudevent.Event) {
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i += benchBatch {
		j := min(i+benchBatch, b.N)
		if err := send(ctx, evs[i%len(evs):i%len(evs)+(j-i)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

func benchAppend(b *testing.B, driver string) {
	evs := benchEvents(b, 10*benchBatch)
	b.Run("hub", func(b *testing.B) {
		eng := openEngine(b, driver)
		tr, err := New(eng, Config{Stream: "bench." + testenv.Name(b)})
		if err != nil {
			b.Fatal(err)
		}
		sendAll(b, tr.Send, evs)
	})
	b.Run("base_redis_pipelined_xadd", func(b *testing.B) {
		rdb := newRedis(b)
		stream := "bench." + testenv.Name(b)
		b.Cleanup(func() { rdb.Del(context.Background(), stream) })
		fields := make([][]string, len(evs))
		for i, ev := range evs {
			fields[i], _ = cloudevent.EncodeFields(ev)
		}
		k := 0
		sendAll(b, func(ctx context.Context, batch []*cloudevent.Event) error {
			p := rdb.Pipeline()
			for range batch {
				p.XAdd(ctx, &redis.XAddArgs{Stream: stream, MaxLen: DefaultMaxLen, Approx: true, Values: fields[k%len(fields)]})
				k++
			}
			_, err := p.Exec(ctx)
			return err
		}, evs)
	})
	b.Run("base_plain_insert", func(b *testing.B) {
		db := plainDB(b, driver)
		fields := make([][]byte, len(evs))
		for i, ev := range evs {
			f, _ := cloudevent.EncodeFields(ev)
			fields[i] = []byte(fmt.Sprint(f))
		}
		var seq int64
		sendAll(b, func(ctx context.Context, batch []*cloudevent.Event) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			q := "INSERT INTO plain (id, fields) VALUES "
			args := make([]any, 0, 2*len(batch))
			for i := range batch {
				if i > 0 {
					q += ","
				}
				if driver == engine.DriverSQLite {
					q += "(?,?)"
				} else {
					q += fmt.Sprintf("($%d,$%d)", 2*i+1, 2*i+2)
				}
				seq++
				args = append(args, seq, fields[seq%int64(len(fields))])
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				tx.Rollback()
				return err
			}
			return tx.Commit()
		}, evs)
	})
}

// plainDB is a bare table with the engine's durability settings.
func plainDB(b *testing.B, driver string) *sql.DB {
	var db *sql.DB
	var err error
	if driver == engine.DriverSQLite {
		db, err = sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "plain.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
		if err == nil {
			db.SetMaxOpenConns(1)
			_, err = db.Exec(`CREATE TABLE plain (id INTEGER PRIMARY KEY, fields BLOB NOT NULL)`)
		}
	} else {
		// Reuse the engine's schema setup, then add the table beside its tables.
		eng := openEngine(b, driver)
		db = eng.DB()
		_, err = db.Exec(`CREATE TABLE plain (id BIGINT PRIMARY KEY, fields BYTEA NOT NULL)`)
	}
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkAppendSQLite: publisher append throughput in 100-event batches on SQLite
// (WAL, synchronous=FULL) vs Redis pipelined XADD of the same fields, and vs a plain
// batched INSERT of 100 rows (the engine's own overhead).
func BenchmarkAppendSQLite(b *testing.B) { benchAppend(b, engine.DriverSQLite) }

// BenchmarkAppendPostgres: the same on PostgreSQL (synchronous_commit=on).
func BenchmarkAppendPostgres(b *testing.B) { benchAppend(b, engine.DriverPostgres) }

// BenchmarkConsumeSQLite: group consume+ack throughput of the shared consumer loop on
// kdbstream (SQLite) vs the Redis transport's consumer, both with their defaults
// (COUNT 100, one handler at a time), over events published beforehand.
func BenchmarkConsumeSQLite(b *testing.B) {
	const group = "bench-consume"
	b.Run("hub", func(b *testing.B) {
		eng := openEngine(b, engine.DriverSQLite)
		stream := "bench." + testenv.Name(b)
		tr, err := New(eng, Config{Stream: stream, MaxLen: -1})
		if err != nil {
			b.Fatal(err)
		}
		publishN(b, tr.Send)
		c, err := NewConsumer(eng, streams.ConsumerConfig{Stream: stream, Group: group, Consumer: "c1", Start: "0"})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		consumeN(b, c.Start, func() int64 {
			s, _ := eng.XPendingSummary(context.Background(), stream, group)
			return s.Count
		})
	})
	b.Run("base_redisstream", func(b *testing.B) {
		rdb := newRedis(b)
		stream := "bench." + testenv.Name(b)
		b.Cleanup(func() { rdb.Del(context.Background(), stream) })
		tr, err := redisstream.New(rdb, redisstream.Config{Stream: stream, MaxLen: -1})
		if err != nil {
			b.Fatal(err)
		}
		defer tr.Close()
		publishN(b, tr.Send)
		c, err := redisstream.NewConsumer(rdb, streams.ConsumerConfig{Stream: stream, Group: group, Consumer: "c1", Start: "0", Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		consumeN(b, c.Start, func() int64 {
			p, err := rdb.XPending(context.Background(), stream, group).Result()
			if err != nil {
				return -1
			}
			return p.Count
		})
	})
}

func publishN(b *testing.B, send func(context.Context, []*cloudevent.Event) error) {
	evs := benchEvents(b, 10*benchBatch)
	ctx := context.Background()
	for i := 0; i < b.N; i += benchBatch {
		j := min(i+benchBatch, b.N)
		if err := send(ctx, evs[i%len(evs):i%len(evs)+(j-i)]); err != nil {
			b.Fatal(err)
		}
	}
}

// consumeN starts the consumer and times it until b.N events are handled and acked.
func consumeN(b *testing.B, start func(context.Context, hub.Handler) error, pending func() int64) {
	var handled atomic.Int64
	all := make(chan struct{})
	b.ResetTimer()
	t0 := time.Now()
	if err := start(context.Background(), func(context.Context, *cloudevent.Event) error {
		if handled.Add(1) == int64(b.N) {
			close(all)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Fatalf("handled %d of %d", handled.Load(), b.N)
	}
	for pending() != 0 {
		time.Sleep(time.Millisecond) // the last ack follows the last handler: poll for it
	}
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "events/s")
	b.StopTimer()
}
