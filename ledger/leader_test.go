package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
)

// TestHA_LeaderOnce: of two started Ledgers on one PostgreSQL schema exactly one is the
// leader (the singleton work and shared-state metrics of scaling.md run there); when it
// stops, the other takes the lead. On SQLite every Ledger leads its own file.
func TestHA_LeaderOnce(t *testing.T) {
	t.Parallel()
	const interval = 100 * time.Millisecond
	a, c, _ := openPair(t, ledger.Postgres, ledger.Config{PresenceInterval: interval, PresenceGrace: 3 * time.Second})
	testenv.WaitFor(t, 10*time.Second, "one leader", func() bool { return a.Leader() != c.Leader() })
	leader, other := a, c
	if c.Leader() {
		leader, other = c, a
	}
	for i := 0; i < 5; i++ { // the follower keeps trying and keeps failing
		time.Sleep(interval)
		if !leader.Leader() || other.Leader() {
			t.Fatalf("leadership moved without a stop: leader %v, other %v", leader.Leader(), other.Leader())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := leader.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if leader.Leader() {
		t.Fatal("a stopped Ledger still leads")
	}
	testenv.WaitFor(t, 10*time.Second, "the other Ledger to take the lead", other.Leader)

	s, _, _ := openPair(t, ledger.SQLite, ledger.Config{})
	if !s.Leader() {
		t.Fatal("an SQLite Ledger does not lead its own file")
	}
}
