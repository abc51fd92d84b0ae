package kdbstream

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// databases lists the two engines every behaviour test runs on.
var databases = []string{engine.DriverSQLite, engine.DriverPostgres}

// engineConfig returns a fresh database for the test: a SQLite file in a temp dir, or a
// PostgreSQL schema of its own (dropped at cleanup).
func engineConfig(t testing.TB, driver string) engine.Config {
	t.Helper()
	if driver == engine.DriverSQLite {
		return engine.Config{Driver: driver, DSN: filepath.Join(t.TempDir(), "events.db")}
	}
	url := testenv.PostgresURL(t)
	schema := "kdb_" + testenv.Name(t)
	if len(schema) > 60 {
		schema = "kdb_" + schema[len(schema)-56:]
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, url); err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = c.Close(ctx)
		}
	})
	return engine.Config{Driver: driver, DSN: url, Schema: schema, PollInterval: 200 * time.Millisecond}
}

// openEngine opens a fresh engine, closed at cleanup (registered after the schema drop,
// so it runs first).
func openEngine(t testing.TB, driver string) *engine.Engine {
	t.Helper()
	cfg := engineConfig(t, driver)
	e, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// harness plugs kdbstream into the shared stream contract suite.
func harness(t *testing.T, driver string) streamtest.Harness {
	e := openEngine(t, driver)
	return streamtest.Harness{
		Backend: e,
		Append: func(ctx context.Context, stream string, fields ...string) error {
			_, _, err := e.XAdd(ctx, engine.Add{Stream: stream, Values: fields})
			return err
		},
		Publisher: func(t *testing.T, stream string) hub.Transport {
			tr, err := New(e, Config{Stream: stream, Logger: testenv.Logger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tr.Close() })
			return tr
		},
		PublisherWire: func(t *testing.T, stream string, w streams.Wire) hub.Transport {
			tr, err := New(e, Config{Stream: stream, Encoding: w.Encoding, DefaultActor: w.DefaultActor,
				DefaultSubject: w.DefaultSubject, Logger: testenv.Logger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tr.Close() })
			return tr
		},
		Range: func(ctx context.Context, stream string) ([]map[string]string, error) {
			es, err := e.XRange(ctx, stream, "-", "+", 0)
			if err != nil {
				return nil, err
			}
			out := make([]map[string]string, len(es))
			for i, en := range es {
				m := map[string]string{}
				for j := 0; j+1 < len(en.Fields); j += 2 {
					m[en.Fields[j]] = en.Fields[j+1]
				}
				out[i] = m
			}
			return out, nil
		},
		Pending: func(ctx context.Context, stream, group string) (int64, error) {
			ps, err := e.XPendingSummary(ctx, stream, group)
			return ps.Count, err
		},
		Idempotency: func(t *testing.T) hub.IdempotencyStore {
			s, err := NewIdempotencyStore(context.Background(), e, "test:"+testenv.Name(t)+":")
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Transport: DefaultName,
		// SQL commits are slower than Redis round trips, most of all under -race on a
		// shared machine: 150ms let T5 claim entries a consumer was still holding.
		ClaimMinIdle: time.Second,
	}
}
