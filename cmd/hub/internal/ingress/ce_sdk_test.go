package ingress

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	sdk "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	ce "github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cloudevent/cesdk"
	"github.com/koder/eventhub/hub/transporttest"
)

// recorder is the hub as the ingress sees it: it keeps what was published.
type recorder struct {
	mu  sync.Mutex
	evs []*cloudevent.Event
}

func (r *recorder) Publish(_ context.Context, evs ...*cloudevent.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, evs...)
	return nil
}

func (r *recorder) take() []*cloudevent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.evs
	r.evs = nil
	return out
}

// sdkEvents converts hub events for the SDK.
func sdkEvents(t *testing.T, evs ...*cloudevent.Event) []ce.Event {
	t.Helper()
	out := make([]ce.Event, len(evs))
	for i, ev := range evs {
		var err error
		if out[i], err = cesdk.ToSDK(ev); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestCE_SDKClientPostsToIngress: the CloudEvents SDK's HTTP client is the producer; the
// ingress accepts what it sends in binary, structured and batch mode, and the events
// published into the hub are the ones the SDK was given.
func TestCE_SDKClientPostsToIngress(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := httptest.NewServer(&Handler{Publisher: rec, MaxBatch: 10})
	t.Cleanup(srv.Close)
	// sdk.NewClientHTTP would add an id and a time to events without one; the plain
	// client sends the events exactly as given.
	p, err := cehttp.New()
	if err != nil {
		t.Fatal(err)
	}
	client, err := sdk.NewClient(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := sdk.ContextWithTarget(context.Background(), srv.URL+"/events")

	check := func(t *testing.T, want []*cloudevent.Event) {
		t.Helper()
		got := rec.take()
		if len(got) != len(want) {
			t.Fatalf("ingress published %d events, want %d", len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(want[i], got[i]) {
				t.Errorf("event %d:\n%s", i, transporttest.Diff(want[i], got[i]))
			}
		}
	}

	t.Run("Binary", func(t *testing.T) {
		for _, ev := range []*cloudevent.Event{transporttest.HeaderSafeEvent(), transporttest.BinaryEvent(), transporttest.MinimalEvent()} {
			if res := client.Send(ctx, sdkEvents(t, ev)[0]); !sdk.IsACK(res) {
				t.Fatalf("SDK send: %v", res)
			}
			// The SDK sends no type list, so typed extensions arrive as their strings.
			check(t, []*cloudevent.Event{transporttest.StringExtensions(ev)})
		}
	})
	t.Run("Structured", func(t *testing.T) {
		sctx := binding.WithForceStructured(ctx)
		for _, ev := range []*cloudevent.Event{transporttest.FullEvent(), transporttest.BinaryEvent(), transporttest.MinimalEvent()} {
			if res := client.Send(sctx, sdkEvents(t, ev)[0]); !sdk.IsACK(res) {
				t.Fatalf("SDK send: %v", res)
			}
			check(t, []*cloudevent.Event{transporttest.JSONExtensions(ev)})
		}
	})
	t.Run("Batch", func(t *testing.T) {
		evs := []*cloudevent.Event{transporttest.FullEvent(), transporttest.BinaryEvent(), transporttest.MinimalEvent()}
		req, err := cehttp.NewHTTPRequestFromEvents(context.Background(), srv.URL+"/events", sdkEvents(t, evs...))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("batch: status %d", resp.StatusCode)
		}
		want := make([]*cloudevent.Event, len(evs))
		for i, ev := range evs {
			want[i] = transporttest.JSONExtensions(ev)
		}
		check(t, want)
	})
}
