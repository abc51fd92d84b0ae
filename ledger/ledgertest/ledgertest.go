// Package ledgertest opens a Ledger for tests on either backend: a PostgreSQL schema of
// its own (dropped at cleanup) or a SQLite file in the test's temp dir. Packages on the
// ledger run one shared test body per backend with Each, River driver-suite style.
package ledgertest

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
)

// Backends lists both backends in the order Each runs them.
var Backends = []ledger.Backend{ledger.Postgres, ledger.SQLite}

// Each runs f as a parallel subtest per backend, named "postgres" and "sqlite".
func Each(t *testing.T, f func(t *testing.T, b ledger.Backend)) {
	t.Helper()
	for _, b := range Backends {
		t.Run(b.String(), func(t *testing.T) {
			t.Parallel()
			f(t, b)
		})
	}
}

// Config returns cfg pointed at a fresh database for backend b: a new, empty schema
// name on PostgreSQL (created by Open unless NoMigrate, dropped at cleanup) or a file in
// t.TempDir() on SQLite. Timings left zero are shortened for tests.
func Config(t testing.TB, b ledger.Backend, cfg ledger.Config) ledger.Config {
	t.Helper()
	switch b {
	case ledger.Postgres:
		cfg.DSN = testenv.PostgresURL(t)
		cfg.Schema = "lt_" + strings.ToLower(ulid.Make().String())
		if cfg.MaxConns == 0 {
			cfg.MaxConns = 8
		}
		schema, dsn := cfg.Schema, cfg.DSN
		t.Cleanup(func() { DropSchema(t, dsn, schema) })
	case ledger.SQLite:
		cfg.DSN = "sqlite://" + filepath.Join(t.TempDir(), "ledger.db")
	}
	if cfg.FetchPollInterval == 0 {
		cfg.FetchPollInterval = 50 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = Logger(t)
	}
	return cfg
}

// Open opens a Ledger on a fresh database (see Config); it is closed at cleanup.
func Open(t testing.TB, b ledger.Backend, cfg ledger.Config) *ledger.Ledger {
	t.Helper()
	cfg = Config(t, b, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := ledger.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("ledgertest: open %s: %v", b, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("ledgertest: close: %v", err)
		}
	})
	return l
}

// DropSchema drops a PostgreSQL schema and everything in it.
func DropSchema(t testing.TB, dsn, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Errorf("ledgertest: drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("ledgertest: drop schema %s: %v", schema, err)
	}
}

// Logger sends warnings and errors to the test log. River logs a lot at info level;
// a test wants what went wrong.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
