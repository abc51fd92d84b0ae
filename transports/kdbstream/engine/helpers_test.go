package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
)

// testDialect is one database the shared engine tests run on. As in River's driver
// suite, a shared test (differential, crash, engine behaviour, XACK batches, the
// benchmarks) takes its body once per entry of testDialects, as a parallel subtest
// named after the entry, so a new database joins every shared test by one entry here.
type testDialect struct {
	name   string // subtest name
	driver string // Config.Driver
	// config returns the configuration of a fresh database for tb (a file in a temp
	// dir; a PostgreSQL schema of its own, dropped at cleanup), adjusted by mod.
	config func(tb testing.TB, mod func(*Config)) Config
	// durability lists the commit settings the crash test covers, each a subtest.
	durability []durabilityMode
}

// durabilityMode is one commit setting of a database.
type durabilityMode struct {
	name string
	mod  func(*Config) // nil: the database's default
}

// testDialects are the databases every shared test runs on, in this order.
var testDialects = []testDialect{
	{
		name: "SQLite", driver: DriverSQLite, config: sqliteConfigT,
		durability: []durabilityMode{
			{"synchronous=FULL", func(c *Config) { c.Synchronous = "FULL" }},
			{"synchronous=NORMAL", func(c *Config) { c.Synchronous = "NORMAL" }},
		},
	},
	{
		name: "Postgres", driver: DriverPostgres, config: postgresConfigT,
		durability: []durabilityMode{
			{"synchronous_commit=on", nil}, // the server's default; appends never relax it
		},
	},
}

// forEachDialect runs body once per database of testDialects, each as a parallel
// subtest named after it.
func forEachDialect(t *testing.T, body func(t *testing.T, d testDialect)) {
	t.Helper()
	for _, d := range testDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			body(t, d)
		})
	}
}

// open opens an engine on a fresh database of d, closed at cleanup.
func (d testDialect) open(tb testing.TB, mod func(*Config)) *Engine {
	tb.Helper()
	return openT(tb, d.config(tb, mod))
}

// sqliteConfigT is a fresh SQLite file.
func sqliteConfigT(tb testing.TB, mod func(*Config)) Config {
	cfg := Config{Driver: DriverSQLite, DSN: filepath.Join(tb.TempDir(), "kdb.db")}
	if mod != nil {
		mod(&cfg)
	}
	return cfg
}

// postgresConfigT is a schema of its own on the test server, dropped at cleanup (after
// the engines opened on it are closed: their cleanups are registered later).
func postgresConfigT(tb testing.TB, mod func(*Config)) Config {
	tb.Helper()
	url := testenv.PostgresURL(tb)
	schema := "kdb_" + testenv.Name(tb)
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
	cfg := Config{Driver: DriverPostgres, DSN: url, Schema: schema, PollInterval: 200 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	return cfg
}

// openT opens an engine on cfg, closed at cleanup.
func openT(tb testing.TB, cfg Config) *Engine {
	tb.Helper()
	e, err := Open(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// openPostgresT opens an engine in a schema of its own, dropped at cleanup.
func openPostgresT(tb testing.TB, mod func(*Config)) *Engine {
	return openT(tb, postgresConfigT(tb, mod))
}

// realRedisT is a client of the machine's Redis (RESP2), closed at cleanup.
func realRedisT(tb testing.TB) *redis.Client {
	tb.Helper()
	opt, err := redis.ParseURL(testenv.RedisURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	opt.Protocol = 2
	rdb := redis.NewClient(opt)
	tb.Cleanup(func() { _ = rdb.Close() })
	return rdb
}
