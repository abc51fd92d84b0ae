package outbox_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
	"github.com/koder/eventhub/transports/webhook"
)

// TestH6_OutboxRelayHonoursAcceptTime: an outbox row relayed to the webhook transport
// reaches the endpoints registered when the event was published (the row written), not
// those registered while it waited for the relay. The ledger is started only after the
// second endpoint exists, so the relay works the row strictly after it.
func TestH6_OutboxRelayHonoursAcceptTime(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		ctx := testenv.Context(t, 60*time.Second)
		var (
			mu  sync.Mutex
			got = map[string]int{}
		)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got[r.URL.Path]++
			mu.Unlock()
		}))
		t.Cleanup(srv.Close)

		l := ledgertest.Open(t, b, ledger.Config{})
		tr, err := webhook.New(ctx, webhook.Config{
			Allow: []string{"127.0.0.1"}, AttemptTimeout: 5 * time.Second, Workers: 5,
			RetrySchedule: []time.Duration{10 * time.Millisecond}, Logger: ledgertest.Logger(t),
		}, l)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tr.Close() })
		o, err := outbox.New(l, fastRetry, outbox.MapLookup(map[string]hub.Transport{"hooks": tr}))
		if err != nil {
			t.Fatal(err)
		}
		register := func(path string) *webhook.Endpoint {
			t.Helper()
			ep, err := tr.CreateEndpoint(ctx, webhook.EndpointSpec{URL: srv.URL + path, Patterns: []string{"#"}})
			if err != nil {
				t.Fatal(err)
			}
			return ep
		}

		// The row is written at once after the older endpoint, often in its millisecond:
		// registration counts from the start of its millisecond, so it is included.
		older := register("/older")
		ev := newEvent(t, 1)
		if err := o.Enqueue(ctx, items([]*cloudevent.Event{ev}, "hooks")); err != nil {
			t.Fatal(err)
		}
		// The newer endpoint must be registered in a later millisecond than the row to
		// come after it (ledger.TimePrecision).
		enqueued := time.Now()
		for !ledger.Truncate(time.Now()).After(ledger.Truncate(enqueued)) {
			time.Sleep(100 * time.Microsecond)
		}
		newer := register("/newer")
		start(t, l)
		t.Cleanup(func() { _ = l.Stop(testenv.Context(t, 10*time.Second)) })

		var ds []*webhook.Delivery
		testenv.WaitFor(t, 30*time.Second, "the older endpoint's delivery", func() bool {
			ds, err = tr.Deliveries(ctx, webhook.DeliveryFilter{EndpointID: older.ID})
			return err == nil && len(ds) == 1 && ds[0].State == webhook.DeliveryDelivered
		})
		if ds[0].EventID != ev.ID {
			t.Fatalf("older endpoint got %s, want %s", ds[0].EventID, ev.ID)
		}
		// Send inserts every delivery of the event at once: the newer one would exist by now.
		late, err := tr.Deliveries(ctx, webhook.DeliveryFilter{EndpointID: newer.ID})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(late) != 0 || got["/newer"] != 0 || got["/older"] != 1 {
			t.Fatalf("endpoint registered after the event was accepted: %d deliveries, %d requests (older: %d requests); want 0, 0 (1)",
				len(late), got["/newer"], got["/older"])
		}
	})
}
