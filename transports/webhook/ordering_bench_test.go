package webhook

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// BenchmarkDeliverOrdered is delivery throughput to an ordered endpoint (hub: 100
// subjects, one delivery per subject at a time) against the same traffic to an
// unordered endpoint on the same ledger (base_unordered). One op = one event
// delivered.
func BenchmarkDeliverOrdered(b *testing.B) {
	recv := &benchReceiver{}
	srv := httptest.NewServer(recv)
	b.Cleanup(srv.Close)
	ctx := context.Background()
	l := ledgertest.Open(b, ledger.Postgres, ledger.Config{FetchPollInterval: 50 * time.Millisecond, MaxConns: 40})
	tr, err := New(ctx, Config{Allow: []string{"127.0.0.1"}, Workers: 1000, Logger: ledgertest.Logger(b)}, l)
	if err != nil {
		b.Fatal(err)
	}
	if err := l.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Stop(ctx) })
	for _, spec := range []EndpointSpec{
		{URL: srv.URL + "/ordered", Patterns: []string{"ordered.#"}, Controls: Controls{Ordering: Ordering{Enabled: true}}},
		{URL: srv.URL + "/plain", Patterns: []string{"plain.#"}},
	} {
		if _, err := tr.CreateEndpoint(ctx, spec); err != nil {
			b.Fatal(err)
		}
	}
	run := func(b *testing.B, typ string) {
		evs := make([]*cloudevent.Event, b.N)
		for i := range evs {
			evs[i] = newEvent(b, typ).SetSubject(fmt.Sprintf("k%d", i%100))
		}
		recv.reset(b.N)
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i += benchBatch {
			for i-recv.count() > benchWindow {
				time.Sleep(time.Millisecond)
			}
			if err := tr.Send(ctx, evs[i:min(i+benchBatch, b.N)]); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-recv.done:
		case <-time.After(10 * time.Minute):
			b.Fatalf("delivered %d of %d", recv.count(), b.N)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	}
	b.Run("hub", func(b *testing.B) { run(b, "ordered.step") })
	b.Run("base_unordered", func(b *testing.B) { run(b, "plain.step") })
}
