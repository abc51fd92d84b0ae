package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/store"
	"github.com/koder/eventhub/internal/testenv"
)

// TestR9_StoreSharesOneDatabase: the ledger and the kdbstream engine open once each,
// on the one SQLite file the config names (relative to the config file, its directory
// created), start and stop around the modules, and close last; without a store both
// say so.
func TestR9_StoreSharesOneDatabase(t *testing.T) {
	t.Parallel()
	t.Run("NoStore", func(t *testing.T) {
		t.Parallel()
		ctx := testenv.Context(t, time.Minute)
		s := store.New(config.Store{}, nil, nil, nil)
		if _, err := s.Ledger(ctx); !errors.Is(err, store.ErrNone) {
			t.Errorf("Ledger without a store: %v", err)
		}
		if _, err := s.KDB(ctx); !errors.Is(err, store.ErrNone) {
			t.Errorf("KDB without a store: %v", err)
		}
		if err := errors.Join(s.Start(ctx), s.Stop(ctx), s.Close()); err != nil {
			t.Errorf("lifecycle with nothing open: %v", err)
		}
	})

	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		ctx := testenv.Context(t, time.Minute)
		dir := t.TempDir()
		f, ps := config.Parse("hub.yaml", dir, []byte("store: {sqlite: data/hub.db}\n"), func(string) (string, bool) { return "", false })
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		s := store.New(f.Config.Store, f, nil, nil)
		l1, err := s.Ledger(ctx)
		if err != nil {
			t.Fatal(err)
		}
		l2, _ := s.Ledger(ctx)
		e1, err := s.KDB(ctx)
		if err != nil {
			t.Fatal(err)
		}
		e2, _ := s.KDB(ctx)
		if l1 != l2 || e1 != e2 {
			t.Fatal("a second call opened another ledger or engine")
		}
		if _, err := os.Stat(filepath.Join(dir, "data", "hub.db")); err != nil {
			t.Fatalf("the SQLite file is not where the config says: %v", err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if _, err := e1.XLen(ctx, "events"); err == nil {
			t.Error("the engine still answers after Close")
		}
	})
}
