package resp

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// testDB is one database the front's tests run on (the engine's two dialects).
type testDB struct {
	name string
	open func(tb testing.TB) *engine.Engine
}

var testDBs = []testDB{{"SQLite", openSQLite}, {"Postgres", openPostgres}}

// forEachDB runs body once per database, as parallel subtests named after it.
func forEachDB(t *testing.T, body func(t *testing.T, db testDB)) {
	t.Helper()
	for _, db := range testDBs {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			body(t, db)
		})
	}
}

func openSQLite(tb testing.TB) *engine.Engine {
	return openEngine(tb, engine.Config{Driver: engine.DriverSQLite, DSN: filepath.Join(tb.TempDir(), "kdb.db")})
}

// openPostgres opens an engine in a schema of its own, dropped at cleanup.
func openPostgres(tb testing.TB) *engine.Engine {
	url := testenv.PostgresURL(tb)
	schema := "resp_" + testenv.Name(tb)
	if len(schema) > 60 {
		schema = schema[len(schema)-60:]
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, url); err == nil {
			c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			c.Close(ctx)
		}
	})
	return openEngine(tb, engine.Config{Driver: engine.DriverPostgres, DSN: url, Schema: schema})
}

func openEngine(tb testing.TB, cfg engine.Config) *engine.Engine {
	tb.Helper()
	e, err := engine.Open(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// startServer serves the front over eng on a loopback port, closed at cleanup, and
// returns its address.
func startServer(tb testing.TB, eng *engine.Engine, cfg Config) (*Server, string) {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testenv.Logger(tb)
	}
	s, err := New(eng, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
		if err := <-done; err != nil && !errors.Is(err, net.ErrClosed) {
			tb.Error(err)
		}
	})
	return s, ln.Addr().String()
}

// dial is a go-redis client of the front (protocol 2 or 3), closed at cleanup.
func dial(tb testing.TB, addr string, proto int, mod func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: addr, Protocol: proto}
	if mod != nil {
		mod(o)
	}
	c := redis.NewClient(o)
	tb.Cleanup(func() { c.Close() })
	return c
}

// frontClient starts a front over a fresh database and returns a RESP3 client of it.
func frontClient(t *testing.T, db testDB) (*redis.Client, *engine.Engine, string) {
	eng := db.open(t)
	_, addr := startServer(t, eng, Config{})
	return dial(t, addr, 3, nil), eng, addr
}

// realRedis is a client of the machine's Redis.
func realRedis(tb testing.TB, proto int) *redis.Client {
	return redisClient(tb, testenv.RedisURL(tb), proto)
}

// redisClient is a client of the Redis at url speaking RESP proto, closed at cleanup.
func redisClient(tb testing.TB, url string, proto int) *redis.Client {
	opt, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatal(err)
	}
	opt.Protocol = proto
	c := redis.NewClient(opt)
	tb.Cleanup(func() { c.Close() })
	return c
}
