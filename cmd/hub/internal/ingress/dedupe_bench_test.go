package ingress

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/dedupe"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/memtransport"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
	"github.com/koder/eventhub/schema"
)

// The cost of the R5 dedupe window per event: the ingress with it (hub) against the
// same ingress without it (base_nodedupe), on the same route, in the same run. One op
// is one new event POSTed and answered 202 (the common path). The store benchmarks use
// an outbox route on the store, the record written in the rows' transaction:
// IngressDedupeSQLite/Postgres as the binary runs it when every route is an outbox
// route (OutboxOnly: the upsert alone), the LookupFirst ones as it runs with any direct
// route (a lookup, then the upsert). IngressDedupeMemory is the in-memory window (no
// store) on a direct route.

func BenchmarkIngressDedupeSQLite(b *testing.B)   { benchDedupeStore(b, ledger.SQLite, true) }
func BenchmarkIngressDedupePostgres(b *testing.B) { benchDedupeStore(b, ledger.Postgres, true) }
func BenchmarkIngressDedupeSQLiteLookupFirst(b *testing.B) {
	benchDedupeStore(b, ledger.SQLite, false)
}
func BenchmarkIngressDedupePostgresLookupFirst(b *testing.B) {
	benchDedupeStore(b, ledger.Postgres, false)
}

func benchDedupeStore(b *testing.B, be ledger.Backend, outboxOnly bool) {
	run := func(b *testing.B, withDedupe bool) {
		l := ledgertest.Open(b, be, ledger.Config{Logger: slog.New(slog.DiscardHandler)})
		ob, err := outbox.New(l, outbox.Config{}, nil) // no relay: measure intake only
		if err != nil {
			b.Fatal(err)
		}
		var hob hub.Outbox = ob
		h := &Handler{Validator: schema.Builtin()}
		if withDedupe {
			d, err := dedupe.Open(context.Background(), l, dedupe.Config{OutboxOnly: outboxOnly, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { d.Close() })
			h.Deduper, hob = d, dedupe.WrapOutbox(ob)
		}
		hb := benchHub(b, hub.WithOutbox(hob))
		if err := hb.Forward("#", nopTransport{}, hub.WithName("events"), hub.WithDelivery(hub.OutboxMode)); err != nil {
			b.Fatal(err)
		}
		h.Publisher = hb
		postParallel(b, h)
	}
	b.Run("hub", func(b *testing.B) { run(b, true) })
	b.Run("base_nodedupe", func(b *testing.B) { run(b, false) })
}

func BenchmarkIngressDedupeMemory(b *testing.B) {
	run := func(b *testing.B, d hub.EventDeduper) {
		hb := benchHub(b)
		tr, err := memtransport.New(memtransport.NewBroker(), memtransport.Config{Stream: "events"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { tr.Close() })
		if err := hb.Forward("#", tr, hub.WithDropWhenFull()); err != nil {
			b.Fatal(err)
		}
		postParallel(b, &Handler{Publisher: hb, Validator: schema.Builtin(), Deduper: d})
	}
	b.Run("hub", func(b *testing.B) { run(b, hub.NewMemoryEventDeduper(0)) })
	b.Run("base_nodedupe", func(b *testing.B) { run(b, nil) })
}

func benchHub(b *testing.B, opts ...hub.Option) *hub.Hub {
	h, err := hub.New(append([]hub.Option{hub.WithRegistry(schema.Builtin()), hub.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	return h
}

// postParallel POSTs b.N fresh events to h over keep-alive connections from 4×GOMAXPROCS
// clients and reports events/s.
func postParallel(b *testing.B, h http.Handler) {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.Cleanup(client.CloseIdleConnections)
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := []byte(`{"specversion":"1.0","id":"` + cloudevent.NewID() + `","source":"/bench","type":"identity.user.erased","tenantid":"acme","data":{"erasure_id":"e1","user_id":"u1"}}`)
			resp, err := client.Post(srv.URL, ContentTypeStructured, bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

type nopTransport struct{}

func (nopTransport) Send(context.Context, []*cloudevent.Event) error { return nil }
func (nopTransport) Close() error                                    { return nil }
