package store_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/store"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// TestTP_StreamsFileOfItsOwn: with streams_sqlite the kdbstream engine opens its own
// file (the ledger keeps the store's), unless the store's file already holds stream
// entries: those stay where they are, so an upgrade to the setting loses nothing.
func TestTP_StreamsFileOfItsOwn(t *testing.T) {
	t.Parallel()
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	open := func(t *testing.T, cfg config.Store) *engine.Engine {
		t.Helper()
		s := store.New(cfg, nil, nil, nil)
		t.Cleanup(func() { s.Close() })
		e, err := s.KDB(testenv.Context(t, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}

	t.Run("NewStore", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		open(t, config.Store{SQLite: filepath.Join(dir, "hub.db"), StreamsSQLite: filepath.Join(dir, "streams.db")})
		if !exists(filepath.Join(dir, "streams.db")) || exists(filepath.Join(dir, "hub.db")) {
			t.Fatal("want the engine in streams.db and nothing in hub.db (the ledger was not opened)")
		}
	})

	t.Run("StreamsAlreadyInTheStoreFile", func(t *testing.T) {
		t.Parallel()
		ctx := testenv.Context(t, time.Minute)
		dir := t.TempDir()
		main := filepath.Join(dir, "hub.db")
		s := store.New(config.Store{SQLite: main}, nil, nil, nil)
		e, err := s.KDB(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.XAdd(ctx, engine.Add{Stream: "events", Values: []string{"k", "v"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		e2 := open(t, config.Store{SQLite: main, StreamsSQLite: filepath.Join(dir, "streams.db")})
		if exists(filepath.Join(dir, "streams.db")) {
			t.Fatal("streams.db created although hub.db holds the stream")
		}
		n, err := e2.XLen(ctx, "events")
		if err != nil || n != 1 {
			t.Fatalf("XLen events = %d, %v; want the entry written before", n, err)
		}
	})
}
