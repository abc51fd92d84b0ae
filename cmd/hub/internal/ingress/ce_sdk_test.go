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

// headerSafe is an event whose attribute values the SDK can put in HTTP headers as they
// are: it does not percent-encode them (TestCE_SDKDefect_HeaderValuesNotPercentEncoded),
// so binary mode is tested with values that need no encoding.
func headerSafe() *cloudevent.Event {
	ev := transporttest.FullEvent()
	ev.Source = "https://example.com/eventhub/test?x=1"
	ev.Subject = "usr_42"
	ev.Extensions[cloudevent.ExtTenantID] = "tenant-1"
	ev.Extensions["note"] = "plain,text;ok"
	ev.Extensions["home"] = cloudevent.URI("https://example.com/a?q=1#f")
	return ev
}

// allStrings is ev with every extension as its canonical string: what a binary-mode
// request without the Eventhub-Ext-Types header carries.
func allStrings(ev *cloudevent.Event) *cloudevent.Event {
	c := ev.Clone()
	for k, v := range c.Extensions {
		c.Extensions[k], _ = cloudevent.FormatValue(v)
	}
	return c
}

// jsonTyped is ev as the structured JSON format keeps it: URI, Timestamp and Binary
// extensions become their canonical strings.
func jsonTyped(ev *cloudevent.Event) *cloudevent.Event {
	c := ev.Clone()
	for k, v := range c.Extensions {
		switch v.(type) {
		case string, bool, int32:
		default:
			c.Extensions[k], _ = cloudevent.FormatValue(v)
		}
	}
	return c
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
		for _, ev := range []*cloudevent.Event{headerSafe(), transporttest.BinaryEvent(), transporttest.MinimalEvent()} {
			if res := client.Send(ctx, sdkEvents(t, ev)[0]); !sdk.IsACK(res) {
				t.Fatalf("SDK send: %v", res)
			}
			// The SDK sends no type list, so typed extensions arrive as their strings.
			check(t, []*cloudevent.Event{allStrings(ev)})
		}
	})
	t.Run("Structured", func(t *testing.T) {
		sctx := binding.WithForceStructured(ctx)
		for _, ev := range []*cloudevent.Event{transporttest.FullEvent(), transporttest.BinaryEvent(), transporttest.MinimalEvent()} {
			if res := client.Send(sctx, sdkEvents(t, ev)[0]); !sdk.IsACK(res) {
				t.Fatalf("SDK send: %v", res)
			}
			check(t, []*cloudevent.Event{jsonTyped(ev)})
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
			want[i] = jsonTyped(ev)
		}
		check(t, want)
	})
}
