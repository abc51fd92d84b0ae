package engine

import (
	"context"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
)

// TestR9_PendingRuns: a batch read is one run (no per-entry rows) that XACK empties;
// a partial ack keeps the rest pending; the runs are durable (a reopened engine sees
// them); XPENDING (both forms read the runs in place), XINFO and XCLAIM see run
// entries as Redis sees pending entries; a
// read overlapping what is pending (XCLAIM FORCE ahead of the group) falls back to
// rows. The differential test compares the same commands with Redis at random.
func TestR9_PendingRuns(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d testDialect) {
		ctx := testenv.Context(t, time.Minute)
		cfg := d.config(t, nil)
		e := openT(t, cfg)
		counts := func(e *Engine) (rows, runs int64) {
			t.Helper()
			rows, runs, _ = pendingShape(t, ctx, e)
			return rows, runs
		}
		pending := func(e *Engine) int64 {
			t.Helper()
			gs, err := e.XInfoGroups(ctx, "s")
			if err != nil || len(gs) != 1 {
				t.Fatalf("XINFO GROUPS: %+v %v", gs, err)
			}
			cs, err := e.XInfoConsumers(ctx, "s", "g")
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, c := range cs {
				sum += c.Pending
			}
			if sum != gs[0].Pending {
				t.Fatalf("XINFO CONSUMERS pending %d, XINFO GROUPS %d", sum, gs[0].Pending)
			}
			return gs[0].Pending
		}
		seedGroup(t, ctx, e, 300)
		read := func(e *Engine, n int64) []string {
			t.Helper()
			r, err := e.ReadGroupRaw(ctx, "s", "g", "c", ">", n, -1, false)
			if err != nil || int64(len(r.Entries)) != n {
				t.Fatalf("read %d: %d entries, %v", n, len(r.Entries), err)
			}
			ids := make([]string, len(r.Entries))
			for i, en := range r.Entries {
				ids[i] = en.ID.String()
			}
			return ids
		}
		ack := func(e *Engine, ids []string, want int64) {
			t.Helper()
			if n, err := e.XAck(ctx, "s", "g", ids...); err != nil || n != want {
				t.Fatalf("XACK of %d ids: %d, %v; want %d", len(ids), n, err, want)
			}
		}

		// A batch is one run; acking it whole (duplicates counted once) leaves nothing.
		batch := read(e, 100)
		if rows, runs := counts(e); rows != 0 || runs != 1 || pending(e) != 100 {
			t.Fatalf("after a read of 100: %d rows, %d runs, %d pending; want 0, 1, 100", rows, runs, pending(e))
		}
		ack(e, append(slices.Clone(batch), batch[0]), 100)
		if rows, runs := counts(e); rows != 0 || runs != 0 || pending(e) != 0 {
			t.Fatalf("after acking the batch: %d rows, %d runs, %d pending", rows, runs, pending(e))
		}

		// A partial ack keeps the other 90 in the run, through a restart.
		batch = read(e, 100)
		var some []string
		for i := 0; i < len(batch); i += 10 {
			some = append(some, batch[i])
		}
		ack(e, some, 10)
		ack(e, some, 0)
		if rows, runs := counts(e); rows != 0 || runs != 1 || pending(e) != 90 {
			t.Fatalf("after a partial ack: %d rows, %d runs, %d pending", rows, runs, pending(e))
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		e = openT(t, cfg)
		ps, err := e.XPendingSummary(ctx, "s", "g")
		if err != nil || ps.Count != 90 || ps.Min.String() != batch[1] || ps.Max.String() != batch[99] ||
			len(ps.Consumers) != 1 || ps.Consumers[0].Count != 90 {
			t.Fatalf("XPENDING after a restart: %+v %v; want 90 from %s to %s", ps, err, batch[1], batch[99])
		}
		if rows, runs := counts(e); rows != 0 || runs != 1 {
			t.Fatalf("XPENDING's summary leaves %d rows, %d runs; want the run as it was", rows, runs)
		}
		pe, err := e.XPending(ctx, "s", "g", PendingQuery{Start: "-", End: "+", Count: 1000})
		if err != nil || len(pe) != 90 || pe[0].ID.String() != batch[1] || pe[89].ID.String() != batch[99] ||
			pe[0].Consumer != "c" || pe[0].Deliveries != 1 {
			t.Fatalf("XPENDING - + 1000: %d entries %v", len(pe), err)
		}
		if rows, runs := counts(e); rows != 0 || runs != 1 {
			t.Fatalf("XPENDING's extended form leaves %d rows, %d runs; want the run as it was", rows, runs)
		}
		// A range inside the run (batch[10] and batch[20] were acked), by consumer and
		// idle time, reads it in place too.
		pe, err = e.XPending(ctx, "s", "g", PendingQuery{Start: batch[10], End: batch[20], Count: 5, Consumer: "c"})
		if err != nil || len(pe) != 5 || pe[0].ID.String() != batch[11] || pe[4].ID.String() != batch[15] {
			t.Fatalf("XPENDING %s %s 5 c: %+v %v", batch[10], batch[20], pe, err)
		}
		if pe, err = e.XPending(ctx, "s", "g", PendingQuery{Start: "-", End: "+", Count: 10, Consumer: "other"}); err != nil || len(pe) != 0 {
			t.Fatalf("XPENDING - + 10 other: %+v %v", pe, err)
		}
		if pe, err = e.XPending(ctx, "s", "g", PendingQuery{Start: "-", End: "+", Count: 10, MinIdle: time.Hour}); err != nil || len(pe) != 0 {
			t.Fatalf("XPENDING IDLE 3600000 - + 10: %+v %v", pe, err)
		}
		if pe, err = e.XPending(ctx, "s", "g", PendingQuery{Start: "-", End: "+", Count: math.MaxInt64}); err != nil || len(pe) != 90 {
			t.Fatalf("XPENDING - + 9223372036854775807: %d entries, %v", len(pe), err)
		}
		ack(e, batch, 90)

		// XCLAIM FORCE of an entry ahead of the group makes the next read overlap it:
		// that read's entries are rows, and the claimed one changes owner as in Redis.
		ahead := read(e, 100) // the last 100
		ack(e, ahead, 100)
		if err := e.GroupSetID(ctx, "s", "g", batch[99], -1); err != nil {
			t.Fatal(err)
		}
		if _, err := e.XClaim(ctx, "s", "g", "other", 0, []string{ahead[50]}, ClaimOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		again := read(e, 100)
		if !slices.Equal(again, ahead) {
			t.Fatalf("re-read after SETID: %v", again)
		}
		if rows, runs := counts(e); rows != 100 || runs != 0 || pending(e) != 100 {
			t.Fatalf("a read overlapping a pending entry: %d rows, %d runs, %d pending; want 100 rows", rows, runs, pending(e))
		}
		pe, err = e.XPending(ctx, "s", "g", PendingQuery{Start: ahead[50], End: ahead[50], Count: 1})
		if err != nil || len(pe) != 1 || pe[0].Consumer != "c" || pe[0].Deliveries != 1 {
			t.Fatalf("the claimed entry after the re-read: %+v %v; want c's with 1 delivery", pe, err)
		}
	})
}

// TestR9_PendingRunsBounded: a read larger than maxRunIDs is recorded as several runs,
// so that an XACK rewrites at most maxRunIDs ids however large the batch; acks entry by
// entry across the runs, the counts and the extended XPENDING stay Redis's.
func TestR9_PendingRunsBounded(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d testDialect) {
		ctx := testenv.Context(t, time.Minute)
		e := openT(t, d.config(t, nil))
		const n = 2*maxRunIDs + 44
		seedGroup(t, ctx, e, n)
		r, err := e.ReadGroupRaw(ctx, "s", "g", "c", ">", n, -1, false)
		if err != nil || len(r.Entries) != n {
			t.Fatalf("read %d: %d entries, %v", n, len(r.Entries), err)
		}
		var runs, most int64
		if err := e.DB().QueryRowContext(ctx, `SELECT count(*), max(n) FROM kdb_pending_runs`).Scan(&runs, &most); err != nil {
			t.Fatal(err)
		}
		if runs != 3 || most != maxRunIDs {
			t.Fatalf("a read of %d: %d runs, the largest of %d ids; want 3 of at most %d", n, runs, most, maxRunIDs)
		}
		// Ack one by one every other entry, from the first run into the third.
		for i := 1; i < n; i += 2 {
			if k, err := e.XAck(ctx, "s", "g", r.Entries[i].ID.String()); err != nil || k != 1 {
				t.Fatalf("XACK of entry %d: %d, %v", i, k, err)
			}
		}
		ps, err := e.XPendingSummary(ctx, "s", "g")
		if err != nil || ps.Count != n/2 || ps.Min != r.Entries[0].ID || ps.Max != r.Entries[n-2].ID {
			t.Fatalf("XPENDING after acking every other entry: %+v %v; want %d from %s to %s", ps, err, n/2, r.Entries[0].ID, r.Entries[n-2].ID)
		}
		pe, err := e.XPending(ctx, "s", "g", PendingQuery{Start: "-", End: "+", Count: n})
		if err != nil || len(pe) != n/2 {
			t.Fatalf("XPENDING - + %d: %d entries, %v", n, len(pe), err)
		}
		for i, p := range pe {
			if p.ID != r.Entries[2*i].ID || p.Consumer != "c" || p.Deliveries != 1 {
				t.Fatalf("pending entry %d: %+v, want %s of c with 1 delivery", i, p, r.Entries[2*i].ID)
			}
		}
	})
}

// seedGroup appends n entries to stream s and creates group g at its start.
func seedGroup(t *testing.T, ctx context.Context, e *Engine, n int) {
	t.Helper()
	adds := make([]Add, n)
	for i := range adds {
		adds[i] = Add{Stream: "s", Values: []string{"i", "v"}}
	}
	if _, err := e.Append(ctx, adds); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateGroup(ctx, "s", "g", "0"); err != nil {
		t.Fatal(err)
	}
}

// FuzzPendingRunIDs: decodeRunIDs never panics and returns ascending ids; what
// encodeRunIDs wrote decodes to the same ids.
func FuzzPendingRunIDs(f *testing.F) {
	f.Add([]byte{1, 0, 0, 1, 0, 1}, int64(3))
	f.Add(encodeRunIDs([]ID{{5, 0}, {5, 1}, {9, 0}, {1 << 40, 7}}), int64(4))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0}, int64(1))
	f.Fuzz(func(t *testing.T, b []byte, n int64) {
		ids, err := decodeRunIDs(b, n)
		if err == nil {
			if int64(len(ids)) != n {
				t.Fatalf("%d ids for n %d", len(ids), n)
			}
			for i := 1; i < len(ids); i++ {
				if !ids[i-1].Less(ids[i]) || ids[i].Ms < 0 || ids[i].Seq < 0 {
					t.Fatalf("not ascending: %v", ids)
				}
			}
			back, err := decodeRunIDs(encodeRunIDs(ids), n)
			if err != nil || !slices.Equal(back, ids) {
				t.Fatalf("re-encoded %v: %v %v", ids, back, err)
			}
		}
		// Ids made of the input, sorted and unique, survive the round trip.
		var made []ID
		for i := 0; i+2 <= len(b); i += 2 {
			made = append(made, ID{int64(b[i]) << (b[i+1] % 40), int64(b[i+1])})
		}
		slices.SortFunc(made, ID.Cmp)
		made = slices.Compact(made)
		back, err := decodeRunIDs(encodeRunIDs(made), int64(len(made)))
		if err != nil || !slices.Equal(back, made) {
			t.Fatalf("round trip of %v: %v %v", made, back, err)
		}
	})
}

// TestR9_AutoClaimKeepsRuns: XAUTOCLAIM scans the ids of pending runs in their places
// without turning the runs into rows: a scan that claims nothing writes nothing, a
// claim moves only the claimed ids out of their run (into rows of the new owner), and
// a purge of deleted entries only the purged ones; the cursor counts every id scanned.
func TestR9_AutoClaimKeepsRuns(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d testDialect) {
		ctx := testenv.Context(t, time.Minute)
		var clock atomic.Int64
		clock.Store(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC).UnixMilli())
		e := openT(t, d.config(t, func(c *Config) { c.Now = func() time.Time { return time.UnixMilli(clock.Load()) } }))
		counts := func() (rows, runs int64) {
			t.Helper()
			rows, runs, _ = pendingShape(t, ctx, e)
			return rows, runs
		}
		seedGroup(t, ctx, e, 100)
		ids := make([]ID, 100)
		for i, en := range readBatch(t, ctx, e, "c", 100) {
			ids[i] = en.ID
		}
		clock.Add(5000)

		// Nothing idle for 10 s: nothing claimed, the run stays; COUNT 5 scans 50 ids.
		res, err := e.XAutoClaim(ctx, "s", "g", "other", 10*time.Second, "0", 5, false)
		if err != nil || len(res.Claimed) != 0 || res.Next != ids[50] {
			t.Fatalf("XAUTOCLAIM of nothing idle: %+v, %v; want next %v", res, err, ids[50])
		}
		if rows, runs := counts(); rows != 0 || runs != 1 {
			t.Fatalf("after a scan that claims nothing: %d rows, %d runs; want 0, 1", rows, runs)
		}

		// Idle for 5 s: COUNT 3 from the 11th id claims three, which become rows of
		// "other" with a delivery count of 2; the run keeps the other 97.
		res, err = e.XAutoClaim(ctx, "s", "g", "other", time.Second, ids[10].String(), 3, false)
		if err != nil || len(res.Claimed) != 3 || res.Next != ids[13] {
			t.Fatalf("XAUTOCLAIM COUNT 3: %+v, %v", res, err)
		}
		for i, c := range res.Claimed {
			if c.ID != ids[10+i] || c.Deliveries != 2 || len(c.Fields) != 2 {
				t.Fatalf("claimed #%d: %+v, want %v with 2 deliveries and its fields", i, c, ids[10+i])
			}
		}
		if rows, runs := counts(); rows != 3 || runs != 1 {
			t.Fatalf("after claiming 3: %d rows, %d runs; want 3, 1", rows, runs)
		}

		// A deleted entry pending in the run is purged and reported, the rest kept.
		if n, err := e.XDel(ctx, "s", ids[20].String()); err != nil || n != 1 {
			t.Fatalf("XDEL: %d, %v", n, err)
		}
		res, err = e.XAutoClaim(ctx, "s", "g", "other", time.Hour, ids[15].String(), 100, true)
		if err != nil || len(res.Claimed) != 0 || len(res.Deleted) != 1 || res.Deleted[0] != ids[20] || !res.Next.IsZero() {
			t.Fatalf("XAUTOCLAIM over a deleted entry: %+v, %v", res, err)
		}
		if rows, runs := counts(); rows != 3 || runs != 1 {
			t.Fatalf("after the purge: %d rows, %d runs; want 3, 1", rows, runs)
		}

		// The group's view is Redis's: 99 pending, 96 of "c" and 3 of "other".
		ps, err := e.XPendingSummary(ctx, "s", "g")
		if err != nil || ps.Count != 99 || len(ps.Consumers) != 2 || ps.Consumers[0] != (ConsumerPending{"c", 96}) || ps.Consumers[1] != (ConsumerPending{"other", 3}) {
			t.Fatalf("XPENDING summary: %+v, %v", ps, err)
		}
		// Acking everything empties both.
		strs := make([]string, len(ids))
		for i, id := range ids {
			strs[i] = id.String()
		}
		if n, err := e.XAck(ctx, "s", "g", strs...); err != nil || n != 99 {
			t.Fatalf("XACK: %d, %v; want 99", n, err)
		}
		if rows, runs := counts(); rows != 0 || runs != 0 {
			t.Fatalf("after acking all: %d rows, %d runs", rows, runs)
		}
	})
}

// TestR9_ClaimTakesOnlyNamedIDs: XCLAIM turns only the ids it names into rows; the
// run keeps the others, and the group's view stays Redis's.
func TestR9_ClaimTakesOnlyNamedIDs(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d testDialect) {
		ctx := testenv.Context(t, time.Minute)
		e := openT(t, d.config(t, nil))
		seedGroup(t, ctx, e, 100)
		batch := readBatch(t, ctx, e, "c", 100)
		id := batch[42].ID
		c, err := e.XClaim(ctx, "s", "g", "other", 0, []string{id.String()}, ClaimOptions{})
		if err != nil || len(c) != 1 || c[0].ID != id || c[0].Deliveries != 2 {
			t.Fatalf("XCLAIM: %+v, %v", c, err)
		}
		if rows, runs, n := pendingShape(t, ctx, e); rows != 1 || runs != 1 || n != 99 {
			t.Fatalf("after XCLAIM of one id: %d rows, %d runs holding %d; want 1 row, 1 run of 99", rows, runs, n)
		}
		pe, err := e.XPending(ctx, "s", "g", PendingQuery{Start: batch[41].ID.String(), End: batch[43].ID.String(), Count: 10})
		if err != nil || len(pe) != 3 || pe[0].Consumer != "c" || pe[1].Consumer != "other" || pe[1].Deliveries != 2 || pe[2].Consumer != "c" {
			t.Fatalf("XPENDING around the claimed id: %+v, %v", pe, err)
		}
	})
}

// TestR9_HistoryReadTakesOnlyWhatItReturns: a consumer re-reading its own pending
// entries (XREADGROUP ... 0) turns only the entries it returns into rows (their
// delivery counts go up); other consumers' runs, and the rest of its own, stay runs.
func TestR9_HistoryReadTakesOnlyWhatItReturns(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d testDialect) {
		ctx := testenv.Context(t, time.Minute)
		e := openT(t, d.config(t, nil))
		seedGroup(t, ctx, e, 150)
		mine := readBatch(t, ctx, e, "c", 100)
		readBatch(t, ctx, e, "d", 50)
		counts := func() (rows, runs, n int64) { return pendingShape(t, ctx, e) }
		// A consumer with nothing pending writes nothing.
		if r, err := e.ReadGroupRaw(ctx, "s", "g", "idle", "0", 10, -1, false); err != nil || len(r.Entries) != 0 {
			t.Fatalf("history of a consumer with nothing pending: %+v, %v", r, err)
		}
		if rows, runs, n := counts(); rows != 0 || runs != 2 || n != 150 {
			t.Fatalf("after an empty history read: %d rows, %d runs of %d", rows, runs, n)
		}
		// c's history from its 6th entry on, COUNT 10: those ten become rows.
		r, err := e.ReadGroupRaw(ctx, "s", "g", "c", mine[4].ID.String(), 10, -1, false)
		if err != nil || len(r.Entries) != 10 || r.Entries[0].ID != mine[5].ID || r.Entries[9].ID != mine[14].ID {
			t.Fatalf("history read: %+v, %v", r, err)
		}
		for i, dc := range r.Deliveries {
			if dc != 2 {
				t.Fatalf("history entry #%d: %d deliveries, want 2", i, dc)
			}
		}
		if rows, runs, n := counts(); rows != 10 || runs != 2 || n != 140 {
			t.Fatalf("after the history read: %d rows, %d runs of %d; want 10 rows and the two runs holding the other 140", rows, runs, n)
		}
		// The whole history, read again: every entry of c once, in order, the ten with 3.
		r, err = e.ReadGroupRaw(ctx, "s", "g", "c", "0", 0, -1, false)
		if err != nil || len(r.Entries) != 100 {
			t.Fatalf("whole history: %d entries, %v", len(r.Entries), err)
		}
		for i, en := range r.Entries {
			want := int64(2)
			if i >= 5 && i < 15 {
				want = 3
			}
			if en.ID != mine[i].ID || r.Deliveries[i] != want {
				t.Fatalf("whole history #%d: %v with %d deliveries; want %v with %d", i, en.ID, r.Deliveries[i], mine[i].ID, want)
			}
		}
		// DELCONSUMER of d drops its run whole (50 pending) and leaves c's entries.
		if n, err := e.DelConsumer(ctx, "s", "g", "d"); err != nil || n != 50 {
			t.Fatalf("DELCONSUMER d: %d, %v; want 50", n, err)
		}
		ps, err := e.XPendingSummary(ctx, "s", "g")
		if err != nil || ps.Count != 100 || len(ps.Consumers) != 1 || ps.Consumers[0].Name != "c" {
			t.Fatalf("XPENDING after DELCONSUMER: %+v, %v", ps, err)
		}
	})
}

// pendingShape returns how many kdb_pending rows and pending runs the database holds,
// and how many ids the runs hold.
func pendingShape(t *testing.T, ctx context.Context, e *Engine) (rows, runs, ids int64) {
	t.Helper()
	if err := e.DB().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM kdb_pending), (SELECT count(*) FROM kdb_pending_runs),
		(SELECT coalesce(sum(n), 0) FROM kdb_pending_runs)`).Scan(&rows, &runs, &ids); err != nil {
		t.Fatal(err)
	}
	return rows, runs, ids
}

// readBatch is consumer's XREADGROUP ">" COUNT n of group g on stream s, which must
// return n entries.
func readBatch(t *testing.T, ctx context.Context, e *Engine, consumer string, n int) []Entry {
	t.Helper()
	r, err := e.ReadGroupRaw(ctx, "s", "g", consumer, ">", int64(n), -1, false)
	if err != nil || len(r.Entries) != n {
		t.Fatalf("read of %s: %d entries, %v; want %d", consumer, len(r.Entries), err, n)
	}
	return r.Entries
}
