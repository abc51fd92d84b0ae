package auth

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// openDB returns the database of a fresh ledger on backend b: the tables of this
// package live there in production too.
func openDB(t testing.TB, b ledger.Backend) *sql.DB {
	t.Helper()
	return ledgertest.Open(t, b, ledger.Config{}).DB()
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// clock is a settable time source for the stores' now hooks.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().UTC().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func wantCode(t testing.TB, err error, code hub.ErrorCode) {
	t.Helper()
	if got := hub.Code(err); got != code {
		t.Fatalf("error %v: code %v, want %v", err, got, code)
	}
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
