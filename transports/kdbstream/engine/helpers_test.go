package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/internal/testenv"
)

// openSQLiteT opens an engine on a fresh SQLite file.
func openSQLiteT(t testing.TB, mod func(*Config)) *Engine {
	t.Helper()
	cfg := Config{Driver: DriverSQLite, DSN: filepath.Join(t.TempDir(), "kdb.db")}
	if mod != nil {
		mod(&cfg)
	}
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// openPostgresT opens an engine in a schema of its own, dropped at cleanup.
func openPostgresT(t testing.TB, mod func(*Config)) *Engine {
	t.Helper()
	url := testenv.PostgresURL(t)
	schema := "kdb_" + testenv.Name(t)
	if len(schema) > 60 {
		schema = schema[len(schema)-60:]
	}
	cfg := Config{Driver: DriverPostgres, DSN: url, Schema: schema, PollInterval: 200 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, url); err == nil {
			c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			c.Close(ctx)
		}
	})
	return e
}

// engines returns one engine per database, named for subtests.
func engines(t *testing.T) map[string]func(testing.TB) *Engine {
	return map[string]func(testing.TB) *Engine{
		"SQLite":   func(tb testing.TB) *Engine { return openSQLiteT(tb, nil) },
		"Postgres": func(tb testing.TB) *Engine { return openPostgresT(tb, nil) },
	}
}
