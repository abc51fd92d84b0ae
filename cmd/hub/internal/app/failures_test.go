package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/app"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
)

// downModule opens a transport whose every Send fails as Unavailable: a broker that is
// down for good.
type downModule struct{}

func (*downModule) HubModule() registry.Info {
	return registry.Info{ID: "transport.downtest", New: func() registry.Module { return new(downModule) }}
}

func (*downModule) Open(context.Context, *registry.Runtime) (hub.Transport, error) {
	return downTransport{}, nil
}

type downTransport struct{}

func (downTransport) Send(context.Context, []*cloudevent.Event) error {
	return hub.Errorf(hub.Unavailable, "downtest: connection refused")
}
func (downTransport) Close() error { return nil }

// sinkModule records what it is sent (transport.sinktest).
type sinkModule struct{}

var sunk = make(chan *cloudevent.Event, 16)

func (*sinkModule) HubModule() registry.Info {
	return registry.Info{ID: "transport.sinktest", New: func() registry.Module { return new(sinkModule) }}
}

func (*sinkModule) Open(context.Context, *registry.Runtime) (hub.Transport, error) {
	return sinkTransport{}, nil
}

type sinkTransport struct{}

func (sinkTransport) Send(_ context.Context, evs []*cloudevent.Event) error {
	for _, ev := range evs {
		sunk <- ev
	}
	return nil
}
func (sinkTransport) Close() error { return nil }

func init() {
	registry.Register(new(downModule))
	registry.Register(new(sinkModule))
}

func startIn(t *testing.T, dir, yaml string) *app.App {
	t.Helper()
	f, ps := config.Parse("hub.yaml", dir, []byte(yaml), env(nil))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	p, ps := app.Build(f, env(nil), nil)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	a, err := app.Start(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func closeApp(t *testing.T, a *app.App) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func orderPlaced(tenant string) *cloudevent.Event {
	ev := cloudevent.New("/shop", "shop.order.placed")
	ev.SetTenantID(tenant).SetCorrelationID("corr-1")
	_ = ev.SetData("", map[string]string{"order": "o1"})
	return ev
}

// TestF1_BinaryRecordsFinalFailures: the binary wires a failure sink, so the
// hub.transport.failed event of a direct route to a transport that is down is stored
// under the event's tenant (by default in the store's hub.failures stream), counted,
// and still there after a restart.
func TestF1_BinaryRecordsFinalFailures(t *testing.T) {
	t.Parallel()
	t.Run("DefaultStoreStreamSurvivesRestart", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		yaml := `
store: {sqlite: hub.db}
transports:
  broker: {type: downtest}
routes:
  - {pattern: "#", to: broker, retry: {attempts: 2, backoff: 1ms}}
admin: {listen: "off"}
`
		a := startIn(t, dir, yaml)
		ev := orderPlaced("acme")
		if err := a.Hub().Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		failures := func(a *app.App) []map[string]string {
			eng, err := a.Runtime().KDB(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			es, err := eng.XRange(context.Background(), config.DefaultFailureStream, "-", "+", 10)
			if err != nil {
				return nil // no stream yet
			}
			out := make([]map[string]string, len(es))
			for i, e := range es {
				out[i] = map[string]string{}
				for j := 0; j+1 < len(e.Fields); j += 2 {
					out[i][e.Fields[j]] = e.Fields[j+1]
				}
			}
			return out
		}
		testenv.WaitFor(t, 10*time.Second, "the failure event in the store", func() bool { return len(failures(a)) == 1 })
		waitCounter(t, a, "hub_failure_events_total", config.DefaultFailureStream, "recorded", 1)
		closeApp(t, a)

		a = startIn(t, dir, yaml)
		defer closeApp(t, a)
		fs := failures(a)
		if len(fs) != 1 {
			t.Fatalf("after restart: %d failure events, want 1", len(fs))
		}
		got, err := cloudevent.DecodeFields(fs[0], config.DefaultFailureStream)
		if err != nil {
			t.Fatal(err)
		}
		var tf hub.TransportFailure
		_ = json.Unmarshal(got.Data, &tf)
		if got.Type != hub.TypeTransportFailed || got.TenantID() != "acme" || got.CorrelationID() != "corr-1" || got.Subject != ev.ID ||
			tf.EventID != ev.ID || tf.Route != app.RouteName("broker", "#") || tf.Attempts != 2 || tf.Code != "Unavailable" {
			t.Errorf("failure event %+v data %+v", got, tf)
		}
		if _, err := cloudevent.ParseID(got.ID); err != nil || !strings.HasPrefix(got.ID, cloudevent.IDPrefix) {
			t.Errorf("the hub's own id %q is not evt_<ULID>: %v", got.ID, err)
		}
	})
	t.Run("ToAnotherTransport", func(t *testing.T) {
		t.Parallel()
		a := startIn(t, t.TempDir(), `
transports:
  broker: {type: downtest}
  audit: {type: sinktest}
routes:
  - {pattern: "shop.#", to: broker, retry: {attempts: 1}}
failures: {to: audit}
admin: {listen: "off"}
`)
		defer closeApp(t, a)
		ev := orderPlaced("globex")
		if err := a.Hub().Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		select {
		case fe := <-sunk:
			if fe.Type != hub.TypeTransportFailed || fe.TenantID() != "globex" || fe.Subject != ev.ID {
				t.Errorf("sink got %s tenant %q subject %q", fe.Type, fe.TenantID(), fe.Subject)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no failure event reached failures.to")
		}
		waitCounter(t, a, "hub_failure_events_total", "audit", "recorded", 1)
	})
}

// waitCounter waits for a counter of the app's registry to reach want: the sink counts
// a failure event after its transport's Send returned, so the event can be seen (in the
// store, on the channel) a moment before it is counted.
func waitCounter(t *testing.T, a *app.App, name, sink, outcome string, want float64) {
	t.Helper()
	var got float64
	testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("%s{sink=%s,outcome=%s} = %v", name, sink, outcome, want), func() bool {
		got = counter(t, a, name, sink, outcome)
		return got >= want
	})
	if got != want {
		t.Errorf("%s{sink=%s,outcome=%s} = %v, want %v", name, sink, outcome, got, want)
	}
}

// counter reads a counter of the app's registry by name and labels (sink, outcome).
func counter(t *testing.T, a *app.App, name, sink, outcome string) float64 {
	t.Helper()
	mfs, err := a.Runtime().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["sink"] == sink && l["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s{sink=%q,outcome=%q}", name, sink, outcome)
	return 0
}
