package dedupe

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
)

// BenchmarkAdmit* measure the window's cost per event without HTTP, one event per
// publish from one goroutine: Admit publishing to an outbox route through WrapOutbox
// (hub) against the same hub publishing without the window (base_publish). Names as in
// the ingress benchmarks: OutboxOnly (the upsert in the rows' transaction only) and
// LookupFirst (a lookup, then the upsert).
func BenchmarkAdmitSQLite(b *testing.B)              { benchAdmit(b, ledger.SQLite, true) }
func BenchmarkAdmitSQLiteLookupFirst(b *testing.B)   { benchAdmit(b, ledger.SQLite, false) }
func BenchmarkAdmitPostgres(b *testing.B)            { benchAdmit(b, ledger.Postgres, true) }
func BenchmarkAdmitPostgresLookupFirst(b *testing.B) { benchAdmit(b, ledger.Postgres, false) }

func benchAdmit(b *testing.B, be ledger.Backend, outboxOnly bool) {
	quiet := slog.New(slog.DiscardHandler)
	run := func(b *testing.B, window bool) {
		l := ledgertest.Open(b, be, ledger.Config{Logger: quiet})
		ob, err := outbox.New(l, outbox.Config{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		var hob hub.Outbox = ob
		var s *Store
		if window {
			if s, err = Open(context.Background(), l, Config{OutboxOnly: outboxOnly, PruneInterval: -1, Logger: quiet}); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			hob = WrapOutbox(ob)
		}
		h, err := hub.New(hub.WithOutbox(hob), hub.WithLogger(quiet))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { h.Close() })
		if err := h.Forward("#", nopTransport{}, hub.WithName("dest"), hub.WithDelivery(hub.OutboxMode)); err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ResetTimer()
		for range b.N {
			ev := event("acme", cloudevent.NewID(), "a")
			if !window {
				if err := h.Publish(ctx, ev); err != nil {
					b.Fatal(err)
				}
				continue
			}
			if _, err := s.Admit(ctx, []hub.EventKey{hub.KeyOf(ev)}, time.Hour, func(ctx context.Context, _ []int) error {
				return h.Publish(ctx, ev)
			}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("hub", func(b *testing.B) { run(b, true) })
	b.Run("base_publish", func(b *testing.B) { run(b, false) })
}
