package app_test

import (
	"strings"
	"testing"

	"github.com/koder/eventhub/cmd/hub/internal/app"
)

func TestEmbeddedDefaultLintsClean(t *testing.T) {
	t.Parallel()
	f, ps := app.LoadConfig("", env(nil))
	if len(ps) == 0 {
		_, ps = app.Build(f, env(nil), nil)
	}
	if len(ps) > 0 {
		t.Fatalf("embedded default:\n%v", ps)
	}
}

// TestExampleConfigLintsClean keeps the documented sample config honest.
func TestExampleConfigLintsClean(t *testing.T) {
	t.Parallel()
	for _, bus := range []string{"", "redis", "redis-stream", "kdb-stream"} {
		vars := env(map[string]string{"KODER_EVENT_BUS": bus})
		f, ps := app.LoadConfig("../../testdata/hub.example.yaml", vars)
		if len(ps) == 0 {
			_, ps = app.Build(f, vars, nil)
		}
		if len(ps) > 0 {
			t.Errorf("KODER_EVENT_BUS=%q:\n%v", bus, ps)
		}
	}
}

// TestBusFollowsKODER_EVENT_BUS checks R9's flag on the bus transport: one config,
// two buses.
func TestBusFollowsKODER_EVENT_BUS(t *testing.T) {
	t.Parallel()
	cfg := "store: {sqlite: x.db}\ntransports:\n  bus:\n    type: bus\n    service: id\n"
	cases := []struct {
		bus  string
		want string
	}{
		{"", ""},             // redis, URL from KODER_REDIS_URL
		{"redis-stream", ""}, // eventbus's spelling of redis: one variable serves both
		{"kdb-stream", ""},   // kdbstream in the store
		{"nats", `transports.bus.bus: provision: bus: "nats": want redis or kdb-stream`},
	}
	for _, c := range cases {
		ps := lint(t, cfg, map[string]string{"KODER_EVENT_BUS": c.bus, "KODER_REDIS_URL": "redis://127.0.0.1:6379/0"})
		got := ""
		if len(ps) > 0 {
			got = ps.Error()
		}
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("KODER_EVENT_BUS=%q: %q, want %q", c.bus, got, c.want)
		}
	}
	if ps := lint(t, cfg, nil); len(ps) != 1 || !strings.Contains(ps[0].String(), "transports.bus.redis_url: bus redis: required (or set KODER_REDIS_URL)") {
		t.Errorf("redis bus without a URL: %v", ps)
	}
}
