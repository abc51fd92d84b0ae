package outbox_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
)

// txSender records the order of the writes in the enqueue's transaction: its own
// SendTx, and (before it) how many outbox rows the transaction had written by then.
type txSender struct {
	name   string
	l      *ledger.Ledger
	locks  bool
	mu     *sync.Mutex
	calls  *[]string
	rowsAt *map[string]int
}

func (s txSender) Send(context.Context, []*cloudevent.Event) error { return nil }
func (s txSender) Close() error                                    { return nil }
func (s txSender) Ledger() *ledger.Ledger                          { return s.l }
func (s txSender) LocksRowsUntilCommit() bool                      { return s.locks }

func (s txSender) SendTx(ctx context.Context, tx any, batch []*cloudevent.Event) error {
	var n int
	if err := tx.(interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}).QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE queue = $1`, outbox.DefaultQueue).Scan(&n); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.calls = append(*s.calls, s.name)
	(*s.rowsAt)[s.name] = n
	return nil
}

// A destination whose SendTx locks rows until the commit (outbox.RowLocker: kdbstream on
// PostgreSQL) is written last in the enqueue's transaction: after the other direct
// destinations and after the rows of the destinations outside the database, so the
// lock is held for the commit only.
func TestO4_RowLockersWriteLast(t *testing.T) {
	t.Parallel()
	l := ledgertest.Open(t, ledger.SQLite, ledger.Config{})
	var mu sync.Mutex
	var calls []string
	rowsAt := map[string]int{}
	mk := func(name string, locks bool) txSender {
		return txSender{name: name, l: l, locks: locks, mu: &mu, calls: &calls, rowsAt: &rowsAt}
	}
	dests := map[string]hub.Transport{"stream": mk("stream", true), "hooks": mk("hooks", false), "redis": newSink()}
	o, err := outbox.New(l, outbox.Config{}, outbox.MapLookup(dests))
	if err != nil {
		t.Fatal(err)
	}
	ev := newEvent(t, 1)
	if err := o.Enqueue(testenv.Context(t, 30*time.Second), []hub.OutboxItem{{Destination: "stream", Event: ev}, {Destination: "hooks", Event: ev},
		{Destination: "redis", Event: ev}}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0] != "hooks" || calls[1] != "stream" {
		t.Fatalf("SendTx order %v; want the row locker last", calls)
	}
	if rowsAt["stream"] != 1 {
		t.Fatalf("the row locker ran with %d outbox rows written; want 1 (the rows before it)", rowsAt["stream"])
	}
}
