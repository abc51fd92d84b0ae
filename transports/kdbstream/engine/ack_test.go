package engine

import (
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
)

// TestR9_AckBatches pins XACK's count for lists longer than one SQLite statement's
// VALUES chunk: every id that was pending counts once, repeats (also across chunks)
// and ids never delivered count zero, as in Redis.
func TestR9_AckBatches(t *testing.T) {
	t.Parallel()
	forEachDialect(t, func(t *testing.T, d testDialect) {
		e := d.open(t, nil)
		ctx := testenv.Context(t, 30*time.Second)
		if err := e.CreateGroup(ctx, "s", "g", "0"); err != nil {
			t.Fatal(err)
		}
		const n = 2*maxAckChunk + 37
		for i := 0; i < n; i++ {
			if _, _, err := e.XAdd(ctx, Add{Stream: "s", Values: []string{"k", "v"}}); err != nil {
				t.Fatal(err)
			}
		}
		r, err := e.ReadGroupRaw(ctx, "s", "g", "c", ">", 0, -1, false)
		if err != nil || len(r.Entries) != n {
			t.Fatalf("read %d of %d entries: %v", len(r.Entries), n, err)
		}
		var ids []string
		for _, en := range r.Entries {
			ids = append(ids, en.ID.String())
		}
		// Repeats of the first ids land in later chunks; 9-9 was never delivered.
		ids = append(ids, ids[0], ids[1], ids[n-1], "9-9")
		got, err := e.XAck(ctx, "s", "g", ids[:3]...)
		if err != nil || got != 3 {
			t.Fatalf("XACK of 3 ids: %d, %v", got, err)
		}
		got, err = e.XAck(ctx, "s", "g", ids...)
		if err != nil || got != n-3 {
			t.Fatalf("XACK of %d ids: %d (want %d), %v", len(ids), got, n-3, err)
		}
		ps, err := e.XPendingSummary(ctx, "s", "g")
		if err != nil || ps.Count != 0 {
			t.Fatalf("pending after acks: %+v, %v", ps, err)
		}
	})
}
