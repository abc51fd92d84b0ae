package natsjs

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	cenats "github.com/cloudevents/sdk-go/protocol/nats/v2"
	sdk "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	cloudevents "github.com/cloudevents/sdk-go/v2"
	ce "github.com/cloudevents/sdk-go/v2/event"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cloudevent/cesdk"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
	wm "github.com/koder/eventhub/transports/watermill"
)

// TestCE_SDKNATSReadsHub: the CloudEvents SDK's NATS JetStream protocol reads what the
// hub's NATS transport wrote, in binary and structured mode, and gets the events the hub
// sent. The SDK sees typed extensions as strings in binary mode (it ignores the hub's
// Eventhub-Ext-Types header), sees percent-encoded text for the rare values that cannot
// travel raw in a NATS header (none here: the full event's multi-line note is replaced),
// and re-escapes non-ASCII URIs (cloudevent/cesdk TestCE_SDKDefect_URIReescaped), so
// the event's source is ASCII.
func TestCE_SDKNATSReadsHub(t *testing.T) {
	t.Parallel()
	for _, mode := range []wm.Mode{wm.ModeBinary, wm.ModeStructured} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			cfg := b.config()
			cfg.Mode = mode
			tr := newTransport(t, cfg)

			full := transporttest.FullEvent()
			full.Source = "https://example.com/eventhub/test?x=1"
			full.Extensions["note"] = "one line, \"quoted\" ✓"
			evs := []*cloudevent.Event{full, transporttest.BinaryEvent(), transporttest.MinimalEvent()}
			if err := tr.Send(context.Background(), evs); err != nil {
				t.Fatal(err)
			}

			// A connection of its own, closed before the stream is deleted.
			consumer, err := sdk.NewConsumer(b.url, b.stream, b.subject+".>", nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			client, err := cloudevents.NewClient(consumer)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			got := map[string]*cloudevent.Event{}
			var bad []error
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = client.StartReceiver(ctx, func(e ce.Event) {
					ev, err := cesdk.FromSDK(e)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						bad = append(bad, err)
						return
					}
					got[ev.ID] = ev
				})
			}()
			t.Cleanup(func() { cancel(); <-done; _ = consumer.Close(context.Background()) })

			testenv.WaitFor(t, 20*time.Second, "the SDK to read every event", func() bool {
				mu.Lock()
				defer mu.Unlock()
				if len(bad) > 0 {
					t.Fatalf("the SDK could not read a message: %v", bad)
				}
				return len(got) == len(evs)
			})
			for _, ev := range evs {
				want := transporttest.JSONExtensions(ev)
				if mode == wm.ModeBinary {
					want = transporttest.StringExtensions(ev)
				}
				mu.Lock()
				g := got[ev.ID]
				mu.Unlock()
				if !reflect.DeepEqual(want, g) {
					t.Errorf("%s:\n%s", ev.Type, transporttest.Diff(want, g))
				}
			}
		})
	}
}

// TestCE_SDKCoreNATSReadsHub: the SDK's core NATS protocol (protocol/nats/v2, no
// JetStream) subscribed to the transport's subjects reads what it wrote: a JetStream
// publish reaches plain subscribers too. That protocol reads structured mode only (it
// ignores headers), so the transport is in structured mode. Core NATS keeps nothing for
// a subscriber that is not there yet, so a probe event is sent until the SDK has
// subscribed.
func TestCE_SDKCoreNATSReadsHub(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config()
	cfg.Mode = wm.ModeStructured
	tr := newTransport(t, cfg)
	consumer, err := cenats.NewConsumer(b.url, b.subject+".>", nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := cloudevents.NewClient(consumer)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]*cloudevent.Event{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = client.StartReceiver(ctx, func(e ce.Event) {
			if ev, err := cesdk.FromSDK(e); err == nil {
				mu.Lock()
				got[ev.ID] = ev
				mu.Unlock()
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done; _ = consumer.Close(context.Background()) })
	received := func(id string) *cloudevent.Event {
		mu.Lock()
		defer mu.Unlock()
		return got[id]
	}
	// Core NATS delivers only to subscriptions already in place: probe until one of
	// the probes arrives (any of them: each arrives a moment after its Send returns).
	var probes []string
	testenv.WaitFor(t, 10*time.Second, "the SDK's subscription", func() bool {
		probe := transporttest.MinimalEvent()
		if err := tr.Send(context.Background(), []*cloudevent.Event{probe}); err != nil {
			t.Fatal(err)
		}
		probes = append(probes, probe.ID)
		return slices.ContainsFunc(probes, func(id string) bool { return received(id) != nil })
	})
	ev := transporttest.FullEvent()
	ev.Source = "https://example.com/eventhub/test?x=1"
	ev.Extensions["note"] = "one line ✓"
	if err := tr.Send(context.Background(), []*cloudevent.Event{ev}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the event at the SDK", func() bool { return received(ev.ID) != nil })
	if want, g := transporttest.JSONExtensions(ev), received(ev.ID); !reflect.DeepEqual(want, g) {
		t.Fatalf("\n%s", transporttest.Diff(want, g))
	}
}
