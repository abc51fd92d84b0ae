package kdbstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

func TestR6_PublisherTrims(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			eng := openEngine(t, db)
			ctx := testenv.Context(t, time.Minute)
			t.Run("MaxLenApprox", func(t *testing.T) {
				tr, err := New(eng, Config{Stream: "trim.maxlen", MaxLen: 50})
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 5; i++ {
					evs := make([]*cloudevent.Event, 100)
					for j := range evs {
						evs[j] = streamtest.NewEvent(t, "user.updated", fmt.Sprint(j))
					}
					if err := tr.Send(ctx, evs); err != nil {
						t.Fatal(err)
					}
				}
				n, err := eng.XLen(ctx, "trim.maxlen")
				if err != nil || n < 50 || n >= 150 {
					t.Fatalf("XLEN = %d (%v) after 500 appends with MAXLEN ~ 50", n, err)
				}
			})
			t.Run("MinIDAge", func(t *testing.T) {
				// An entry from a day ago, then a Send with a 1h age limit trims it.
				old := fmt.Sprintf("%d-0", time.Now().Add(-24*time.Hour).UnixMilli())
				if _, _, err := eng.XAdd(ctx, engine.Add{Stream: "trim.age", ID: old, Values: []string{"k", "v"}}); err != nil {
					t.Fatal(err)
				}
				tr, err := New(eng, Config{Stream: "trim.age", MinIDAge: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				if err := tr.Send(ctx, []*cloudevent.Event{streamtest.NewEvent(t, "user.updated", "u")}); err != nil {
					t.Fatal(err)
				}
				es, err := eng.XRange(ctx, "trim.age", "-", "+", 0)
				if err != nil || len(es) != 1 || es[0].ID.String() == old {
					t.Fatalf("entries after the age trim: %v (%v); want only the new one", es, err)
				}
			})
		})
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	eng := openEngine(t, engine.DriverSQLite)
	for name, cfg := range map[string]Config{
		"NoStreamSource": {},
		"TwoSources":     {Service: "id", Stream: "x"},
		"BadService":     {Service: "Not A Service"},
		"ReservedPrefix": {Stream: "koder:events:"},
		"BadNaming":      {Naming: "weird"},
		"NegativeAge":    {Stream: "x", MinIDAge: -time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(eng, cfg); hub.Code(err) != hub.InvalidArgument {
				t.Fatalf("New(%+v) = %v, want InvalidArgument", cfg, err)
			}
		})
	}
	t.Run("SendAfterCloseAndUnknownCategory", func(t *testing.T) {
		tr, err := New(eng, Config{Naming: streams.NamingCategory})
		if err != nil {
			t.Fatal(err)
		}
		ev := streamtest.NewEvent(t, "dlq.something", "u")
		if err := tr.Send(context.Background(), []*cloudevent.Event{ev}); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("Send of a type naming the DLQ category: %v, want InvalidArgument", err)
		}
		_ = tr.Close()
		if err := tr.Send(context.Background(), []*cloudevent.Event{ev}); hub.Code(err) != hub.FailedPrecondition {
			t.Fatalf("Send after Close: %v, want FailedPrecondition", err)
		}
	})
}

// TestE8_CategoryStreamsKeepSevenDays: per-category streams are trimmed by age, 7 days
// by default (E8), without a MAXLEN cap; R1 streams keep MAXLEN ~ 100000 (R6).
func TestE8_CategoryStreamsKeepSevenDays(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			eng := openEngine(t, db)
			ctx := testenv.Context(t, time.Minute)
			stream := streams.CategoryPrefix + "retention"
			for _, age := range []time.Duration{8 * 24 * time.Hour, 6 * 24 * time.Hour} {
				id := fmt.Sprintf("%d-0", time.Now().Add(-age).UnixMilli())
				if _, _, err := eng.XAdd(ctx, engine.Add{Stream: stream, ID: id, Values: []string{"k", "v"}}); err != nil {
					t.Fatal(err)
				}
			}
			tr, err := New(eng, Config{Naming: streams.NamingCategory})
			if err != nil {
				t.Fatal(err)
			}
			if tr.cfg.MinIDAge != streams.RetentionE8 || tr.cfg.MaxLen >= 0 {
				t.Fatalf("category defaults MaxLen %d, MinIDAge %s; want no cap and 7 days", tr.cfg.MaxLen, tr.cfg.MinIDAge)
			}
			if err := tr.Send(ctx, []*cloudevent.Event{streamtest.NewEvent(t, "retention.created", "u")}); err != nil {
				t.Fatal(err)
			}
			es, err := eng.XRange(ctx, stream, "-", "+", 0)
			if err != nil || len(es) != 2 {
				t.Fatalf("entries after the age trim: %v (%v); want the 6-day-old one and the new one", es, err)
			}
			r1, err := New(eng, Config{Service: "id"})
			if err != nil {
				t.Fatal(err)
			}
			if r1.cfg.MaxLen != DefaultMaxLen || r1.cfg.MinIDAge != 0 {
				t.Fatalf("R1 defaults MaxLen %d, MinIDAge %s; want 100000 and no age trim", r1.cfg.MaxLen, r1.cfg.MinIDAge)
			}
		})
	}
}
