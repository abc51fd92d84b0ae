package app_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/app"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
)

// lifecycle records what the test modules did, in order.
var lifecycle struct {
	mu  sync.Mutex
	log []string
}

func record(s string) {
	lifecycle.mu.Lock()
	lifecycle.log = append(lifecycle.log, s)
	lifecycle.mu.Unlock()
}

func recorded(prefix string) []string {
	lifecycle.mu.Lock()
	defer lifecycle.mu.Unlock()
	var out []string
	for _, s := range lifecycle.log {
		if strings.HasPrefix(s, prefix) {
			out = append(out, strings.TrimPrefix(s, prefix))
		}
	}
	return out
}

// testTransport opens unless Fail is set; its transport records Close.
type testTransport struct {
	Tag  string `yaml:"tag"`
	Fail bool   `yaml:"fail"`
}

func (*testTransport) HubModule() registry.Info {
	return registry.Info{ID: "transport.lifecycletest", New: func() registry.Module { return new(testTransport) }}
}

func (m *testTransport) Open(ctx context.Context, rt *registry.Runtime) (hub.Transport, error) {
	if m.Fail {
		record(m.Tag + "open-failed")
		return nil, errors.New("cannot open")
	}
	record(m.Tag + "open")
	return closeRecorder{m.Tag}, nil
}

type closeRecorder struct{ tag string }

func (c closeRecorder) Send(context.Context, []*cloudevent.Event) error { return nil }
func (c closeRecorder) Close() error                                    { record(c.tag + "close"); return nil }

type testSource struct {
	Tag  string `yaml:"tag"`
	Fail bool   `yaml:"fail"`
}

func (*testSource) HubModule() registry.Info {
	return registry.Info{ID: "source.lifecycletest", New: func() registry.Module { return new(testSource) }}
}

func (m *testSource) Start(ctx context.Context, rt *registry.Runtime) error {
	if m.Fail {
		record(m.Tag + "start-failed")
		return errors.New("cannot start")
	}
	record(m.Tag + "start")
	return nil
}

func (m *testSource) Close(ctx context.Context) error { record(m.Tag + "stop"); return nil }

func init() {
	registry.Register(new(testTransport))
	registry.Register(new(testSource))
}

func start(t *testing.T, yaml string) (*app.App, error) {
	t.Helper()
	f, ps := config.Parse("hub.yaml", t.TempDir(), []byte(yaml), env(nil))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	p, ps := app.Build(f, env(nil), nil)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return app.Start(context.Background(), p)
}

// TestStartFailureClosesWhatStarted: the lifecycle's promise that a failing step leaves
// nothing open.
func TestStartFailureClosesWhatStarted(t *testing.T) {
	t.Parallel()
	t.Run("TransportFails", func(t *testing.T) {
		t.Parallel()
		_, err := start(t, `
transports:
  a: {type: lifecycletest, tag: "tf/a/"}
  b: {type: lifecycletest, tag: "tf/b/", fail: true}
  c: {type: lifecycletest, tag: "tf/c/"}
admin: {listen: "off"}
`)
		if err == nil || !strings.Contains(err.Error(), "transports.b") {
			t.Fatalf("Start error = %v", err)
		}
		if got := strings.Join(recorded("tf/"), " "); got != "a/open b/open-failed a/close" {
			t.Errorf("lifecycle: %s", got)
		}
	})
	t.Run("SourceFails", func(t *testing.T) {
		t.Parallel()
		_, err := start(t, `
transports:
  a: {type: lifecycletest, tag: "sf/a/"}
sources:
  s1: {type: lifecycletest, tag: "sf/s1/"}
  s2: {type: lifecycletest, tag: "sf/s2/", fail: true}
routes: [{pattern: "#", to: a}]
admin: {listen: "off"}
`)
		if err == nil || !strings.Contains(err.Error(), "sources.s2") {
			t.Fatalf("Start error = %v", err)
		}
		if got := strings.Join(recorded("sf/"), " "); got != "a/open s1/start s2/start-failed s1/stop a/close" {
			t.Errorf("lifecycle: %s", got)
		}
	})
	t.Run("CloseStopsIntakeFirst", func(t *testing.T) {
		t.Parallel()
		a, err := start(t, `
transports:
  a: {type: lifecycletest, tag: "cl/a/"}
sources:
  s1: {type: lifecycletest, tag: "cl/s1/"}
  s2: {type: lifecycletest, tag: "cl/s2/"}
routes: [{pattern: "#", to: a}]
admin: {listen: "127.0.0.1:0"}
`)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(recorded("cl/"), " "); got != "a/open s1/start s2/start s2/stop s1/stop a/close" {
			t.Errorf("lifecycle: %s", got)
		}
	})
}
