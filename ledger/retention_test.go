package ledger_test

import (
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// TestTP_RetainCompletedPerQueue: a queue with its own retention loses its completed
// jobs once they are older than it, while another queue's completed jobs stay for the
// ledger's CompletedRetention (the outbox's relayed rows go, webhook deliveries, the
// console's history, stay).
func TestTP_RetainCompletedPerQueue(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		ctx := testenv.Context(t, 60*time.Second)
		l, tb := setup(t, b, ledger.Config{})
		if err := l.AddQueue("short", 4); err != nil {
			t.Fatal(err)
		}
		if err := l.RetainCompleted("short", time.Second); err != nil {
			t.Fatal(err)
		}
		if err := l.RetainCompleted("short", 0); err == nil {
			t.Fatal("RetainCompleted(0): want an error")
		}
		for i := range 3 {
			for _, q := range []string{"short", river.QueueDefault} {
				if _, err := l.Insert(ctx, pingArgs{N: i}, &river.InsertOpts{Queue: q}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Stop(testenv.Context(t, 10*time.Second)) })
		for range 6 {
			next(t, tb.worker.seen)
		}
		count := func(q string) int {
			t.Helper()
			var n int
			err := l.DB().QueryRowContext(ctx, "SELECT count(*) FROM "+l.Table("river_job")+" WHERE queue = $1 AND state = 'completed'", q).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		testenv.WaitFor(t, 30*time.Second, "six completed jobs", func() bool { return count("short")+count(river.QueueDefault) == 6 })
		time.Sleep(1100 * time.Millisecond) // past the short queue's retention
		n, err := l.CleanRetained(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 || count("short") != 0 || count(river.QueueDefault) != 3 {
			t.Fatalf("deleted %d; completed left: short %d, default %d; want 3 deleted, 0 and 3 left", n, count("short"), count(river.QueueDefault))
		}
	})
}
