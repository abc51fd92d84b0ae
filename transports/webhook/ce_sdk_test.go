package webhook

import (
	"context"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	sdk "github.com/cloudevents/sdk-go/v2"
	ce "github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cloudevent/cesdk"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// sdkReceiver is an endpoint served by the CloudEvents SDK's HTTP receiver.
type sdkReceiver struct {
	url string
	mu  sync.Mutex
	got map[string]*cloudevent.Event
	bad []error
}

func newSDKReceiver(t *testing.T) *sdkReceiver {
	t.Helper()
	r := &sdkReceiver{got: map[string]*cloudevent.Event{}}
	// The SDK's own server and receive loop (StartReceiver), as an application runs
	// it. Not sdk.NewHTTPReceiveHandler: its handler hands each request to a reader
	// bound to that request's context, so a request the sender gave up on (an attempt
	// timeout on a loaded machine) leaves its message with no reader and the next
	// request blocked for ever.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := cehttp.New(cehttp.WithListener(ln))
	if err != nil {
		t.Fatal(err)
	}
	c, err := sdk.NewClient(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.StartReceiver(ctx, func(e ce.Event) {
			ev, err := cesdk.FromSDK(e)
			r.mu.Lock()
			defer r.mu.Unlock()
			if err != nil {
				r.bad = append(r.bad, err)
				return
			}
			r.got[ev.ID] = ev
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	r.url = "http://" + ln.Addr().String() + "/sdk"
	return r
}

func (r *sdkReceiver) event(id string) (*cloudevent.Event, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[id], r.bad
}

// TestCE_SDKReceiverIsWebhookEndpoint: the CloudEvents SDK's HTTP receiver is a webhook
// endpoint and gets every event intact: in structured mode (the default) every
// attribute and the data unchanged, extensions up to the JSON format's types (with an
// ASCII source: the SDK's decoder re-escapes URIs, see cloudevent/cesdk
// TestCE_SDKDefect_URIReescaped); in binary
// mode, for values that need no percent-encoding (the SDK does not decode it, see
// cloudevent/cesdk TestCE_SDKDefect_HeaderValuesNotPercentEncoded), with typed
// extensions as their strings (the SDK ignores the hub's Eventhub-Ext-Types header).
func TestCE_SDKReceiverIsWebhookEndpoint(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		for _, mode := range []Mode{ModeStructured, ModeBinary} {
			t.Run(string(mode), func(t *testing.T) {
				// The receiver first: its server then shuts down after the transport
				// closed its idle connections (cleanups run in reverse), instead of
				// waiting 5 s for a connection the client dialled and never used.
				recv := newSDKReceiver(t)
				tb := setup(t, b, func(c *Config) { c.Mode = mode })
				if _, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: recv.url, Patterns: []string{"#"}}); err != nil {
					t.Fatal(err)
				}
				full := transporttest.FullEvent()
				full.Source = "https://example.com/eventhub/test?x=1"
				evs := []*cloudevent.Event{full, transporttest.BinaryEvent(), transporttest.MinimalEvent()}
				want := make([]*cloudevent.Event, len(evs))
				for i, ev := range evs {
					want[i] = transporttest.JSONExtensions(ev)
				}
				if mode == ModeBinary {
					evs[0] = transporttest.HeaderSafeEvent()
					for i, ev := range evs {
						want[i] = transporttest.StringExtensions(ev)
					}
				}
				tb.send(t, evs...)
				for i, ev := range evs {
					var got *cloudevent.Event
					testenv.WaitFor(t, 30*time.Second, "the SDK receiver to get "+ev.ID, func() bool {
						var bad []error
						got, bad = recv.event(ev.ID)
						if len(bad) > 0 {
							t.Fatalf("the SDK receiver could not read a delivery: %v", bad)
						}
						return got != nil
					})
					if !reflect.DeepEqual(want[i], got) {
						t.Errorf("event %d:\n%s", i, transporttest.Diff(want[i], got))
					}
				}
			})
		}
	})
}
