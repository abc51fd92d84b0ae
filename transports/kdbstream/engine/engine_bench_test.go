package engine

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// The engine's hot paths, one op per entry (or per call for the empty fast paths), on
// each database with its default durability (SQLite WAL synchronous=FULL, PostgreSQL
// synchronous_commit on for appends). The transport-level figures against Redis are in
// the kdbstream package's benchmarks. The databases are testDialects'.

func benchValues() []string {
	return []string{"type", "user.updated", "tenant_id", "t1", "data", `{"user":"u1","name":"Ada Lovelace"}`}
}

// BenchmarkXAdd: concurrent single-entry XADDs, coalesced by the group committer.
func BenchmarkXAdd(b *testing.B) {
	for _, d := range testDialects {
		b.Run(d.name, func(b *testing.B) {
			e := d.open(b, nil)
			vals := benchValues()
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					if _, _, err := e.XAdd(ctx, Add{Stream: "s", Values: vals}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkAppend100: one publisher appending batches of 100 entries (the PostgreSQL
// one-round-trip path; one transaction per batch on SQLite).
func BenchmarkAppend100(b *testing.B) {
	for _, d := range testDialects {
		b.Run(d.name, func(b *testing.B) {
			e := d.open(b, nil)
			adds := make([]Add, 100)
			for i := range adds {
				adds[i] = Add{Stream: "s", Values: benchValues()}
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i += len(adds) {
				if _, err := e.Append(ctx, adds[:min(len(adds), b.N-i)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// readBench opens an engine on d with b.N entries in stream "s" and a group "g" at 0.
func readBench(b *testing.B, d testDialect) (*Engine, context.Context) {
	e := d.open(b, nil)
	ctx := context.Background()
	if err := e.CreateGroup(ctx, "s", "g", "0"); err != nil {
		b.Fatal(err)
	}
	adds := make([]Add, 100)
	for i := range adds {
		adds[i] = Add{Stream: "s", Values: benchValues()}
	}
	for i := 0; i < b.N; i += len(adds) {
		if _, err := e.Append(ctx, adds[:min(len(adds), b.N-i)]); err != nil {
			b.Fatal(err)
		}
	}
	return e, ctx
}

// BenchmarkReadAck: XREADGROUP ">" COUNT 100 then XACK of what it returned, over
// entries appended beforehand.
func BenchmarkReadAck(b *testing.B) { benchReadThenAck(b, nil) }

// benchReadThenAck runs, per database, a consumer loop over entries appended
// beforehand: worker c reads COUNT 100 with ">", then between (another worker's
// command while c's batch is in flight; nil for none), then c acks the batch with one
// XACK. One op is one entry.
func benchReadThenAck(b *testing.B, between func(ctx context.Context, e *Engine) error) {
	for _, d := range testDialects {
		b.Run(d.name, func(b *testing.B) {
			e, ctx := readBench(b, d)
			ids := make([]string, 0, 100)
			b.ResetTimer()
			for n := 0; n < b.N; {
				r, err := e.ReadGroupRaw(ctx, "s", "g", "c", ">", 100, -1, false)
				if err != nil || r.Nil {
					b.Fatalf("read after %d of %d: %+v, %v", n, b.N, r.Nil, err)
				}
				if between != nil {
					if err := between(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
				ids = ids[:0]
				for _, en := range r.Entries {
					ids = append(ids, en.ID.String())
				}
				if k, err := e.XAck(ctx, "s", "g", ids...); err != nil || k != int64(len(ids)) {
					b.Fatalf("XACK: %d of %d, %v", k, len(ids), err)
				}
				n += len(ids)
			}
		})
	}
}

// BenchmarkReadAckEach: XREADGROUP ">" COUNT 100, then one XACK per entry (clients
// that ack each message as they finish it).
func BenchmarkReadAckEach(b *testing.B) { benchReadAckEach(b, 100) }

// BenchmarkReadAckEachCount2000 is BenchmarkReadAckEach with COUNT 2000: consumers
// that read large batches and ack entry by entry, where the cost of an ack must not
// grow with the batch.
func BenchmarkReadAckEachCount2000(b *testing.B) { benchReadAckEach(b, 2000) }

func benchReadAckEach(b *testing.B, count int64) {
	for _, d := range testDialects {
		b.Run(d.name, func(b *testing.B) {
			e, ctx := readBench(b, d)
			b.ResetTimer()
			for n := 0; n < b.N; {
				r, err := e.ReadGroupRaw(ctx, "s", "g", "c", ">", count, -1, false)
				if err != nil || r.Nil {
					b.Fatalf("read after %d of %d: %+v, %v", n, b.N, r.Nil, err)
				}
				for _, en := range r.Entries {
					if k, err := e.XAck(ctx, "s", "g", en.ID.String()); err != nil || k != 1 {
						b.Fatalf("XACK: %d, %v", k, err)
					}
				}
				n += len(r.Entries)
			}
		})
	}
}

// BenchmarkReadNothingNew: a ">" read with nothing new (the unlocked fast path every
// woken consumer takes).
func BenchmarkReadNothingNew(b *testing.B) {
	for _, d := range testDialects {
		b.Run(d.name, func(b *testing.B) {
			e := d.open(b, nil)
			ctx := context.Background()
			if err := e.CreateGroup(ctx, "s", "g", "$"); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := e.ReadGroupRaw(ctx, "s", "g", "c", ">", 100, -1, false)
				if err != nil || !r.Nil {
					b.Fatalf("%+v, %v", r, err)
				}
			}
		})
	}
}

// BenchmarkAutoClaimNothingIdle: XAUTOCLAIM over 100 pending entries none of which is
// idle long enough (the claimer's usual scan). They are one pending run, so every call
// takes the locked path (fastpath.go's idleScan cannot tell whether a run's entries
// still exist); pending rows are answered without a write transaction.
func BenchmarkAutoClaimNothingIdle(b *testing.B) {
	for _, d := range testDialects {
		b.Run(d.name, func(b *testing.B) {
			e := d.open(b, nil)
			ctx := context.Background()
			if err := e.CreateGroup(ctx, "s", "g", "0"); err != nil {
				b.Fatal(err)
			}
			adds := make([]Add, 100)
			for i := range adds {
				adds[i] = Add{Stream: "s", Values: []string{"i", strconv.Itoa(i)}}
			}
			if _, err := e.Append(ctx, adds); err != nil {
				b.Fatal(err)
			}
			if _, err := e.ReadGroupRaw(ctx, "s", "g", "c", ">", 0, -1, false); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := e.XAutoClaim(ctx, "s", "g", "claimer", time.Hour, "0-0", 100, false)
				if err != nil || len(r.Claimed) != 0 {
					b.Fatalf("%+v, %v", r, err)
				}
			}
		})
	}
}

// BenchmarkReadClaimAck: a group of workers where one worker's XAUTOCLAIM (nothing
// idle long enough) runs while another's batch is in flight: XREADGROUP COUNT 100,
// XAUTOCLAIM 1h COUNT 100 by another consumer, XACK of the batch. One op is one entry.
func BenchmarkReadClaimAck(b *testing.B) {
	benchReadThenAck(b, func(ctx context.Context, e *Engine) error {
		if c, err := e.XAutoClaim(ctx, "s", "g", "other", time.Hour, "0-0", 100, false); err != nil || len(c.Claimed) != 0 {
			return fmt.Errorf("XAUTOCLAIM: %+v, %v", c, err)
		}
		return nil
	})
}

// BenchmarkReadPendingAck: the recovery loop of clients older than XAUTOCLAIM, run while
// a batch is in flight: XREADGROUP COUNT 100, XPENDING IDLE 3600000 - + 10 (nothing
// idle, so no XCLAIM follows), XACK of the batch. One op is one entry.
func BenchmarkReadPendingAck(b *testing.B) {
	benchReadThenAck(b, func(ctx context.Context, e *Engine) error {
		if p, err := e.XPending(ctx, "s", "g", PendingQuery{MinIdle: time.Hour, Start: "-", End: "+", Count: 10}); err != nil || len(p) != 0 {
			return fmt.Errorf("XPENDING: %+v, %v", p, err)
		}
		return nil
	})
}

// BenchmarkReadHistoryAck: workers that read their own pending entries (XREADGROUP
// ... 0) before each new read, while another worker's batch is in flight: worker c
// reads COUNT 100 with ">", worker d reads its history (nothing pending), c acks.
// One op is one entry.
func BenchmarkReadHistoryAck(b *testing.B) {
	benchReadThenAck(b, func(ctx context.Context, e *Engine) error {
		if h, err := e.ReadGroupRaw(ctx, "s", "g", "d", "0", 10, -1, false); err != nil || len(h.Entries) != 0 {
			return fmt.Errorf("history of d: %+v, %v", h, err)
		}
		return nil
	})
}
