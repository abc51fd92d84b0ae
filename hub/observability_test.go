package hub_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
)

// syncBuffer is the hub's log sink (written from its delivery goroutines), read back
// as JSON records.
type syncBuffer struct{ testenv.LogBuffer }

func (s *syncBuffer) records(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestR8_LogsAndMetrics(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	reg := prometheus.NewRegistry()
	b := setup(t, hub.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))), hub.WithRegisterer(reg))
	down := sendFunc(func(context.Context, []*cloudevent.Event) error { return hub.ErrUnavailable })
	if err := b.hub.Forward("user.*", b.mem); err != nil {
		t.Fatal(err)
	}
	if err := b.hub.Forward("user.*", down, hub.WithName("down"), fastRetry); err != nil {
		t.Fatal(err)
	}
	ev := event("user.created")
	ev.Subject = "usr_1"
	if err := b.hub.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if err := b.hub.Close(); err != nil {
		t.Fatal(err)
	}

	count := map[string]int{}
	retries := []float64{}
	for _, r := range logs.records(t) {
		msg, _ := r["msg"].(string)
		if r["event_id"] != ev.ID {
			continue
		}
		count[msg]++
		switch msg {
		case "event_emitted":
			if r["type"] != "user.created" || r["subject_id"] != "usr_1" || r["stream"] == "" {
				t.Errorf("event_emitted record %v", r)
			}
		case "event_failed":
			retries = append(retries, r["retry_count"].(float64))
			if r["level"] != "WARN" || r["error"] == "" {
				t.Errorf("event_failed record %v", r)
			}
		case "event_dlq":
			if r["level"] != "WARN" || r["final_error"] == "" {
				t.Errorf("event_dlq record %v", r)
			}
		}
	}
	if count["event_emitted"] != 2 || count["event_failed"] != 3 || count["event_dlq"] != 1 {
		t.Fatalf("records per message %v, want event_emitted 2 (one per route), event_failed 3, event_dlq 1", count)
	}
	if len(retries) != 3 || retries[0] != 0 || retries[2] != 2 {
		t.Fatalf("retry_count values %v, want 0, 1, 2", retries)
	}

	for _, c := range []struct {
		name, route string
		want        float64
	}{
		{"hub_transport_failed_total", "down", 1},
	} {
		if got := metricValue(t, reg, c.name, c.route); got != c.want {
			t.Errorf("%s{route=%s} = %v, want %v", c.name, c.route, got, c.want)
		}
	}
	outcomes := map[string]float64{}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		switch mf.GetName() {
		case "hub_published_total":
			if v := mf.GetMetric()[0].GetCounter().GetValue(); v != 1 {
				t.Errorf("hub_published_total = %v, want 1", v)
			}
		case "hub_delivery_total":
			for _, m := range mf.GetMetric() {
				var route, outcome string
				for _, l := range m.GetLabel() {
					if l.GetName() == "route" {
						route = l.GetValue()
					} else {
						outcome = l.GetValue()
					}
				}
				outcomes[route+"/"+outcome] = m.GetCounter().GetValue()
			}
		case "hub_delivery_seconds":
			if n := len(mf.GetMetric()); n != 2 {
				t.Errorf("hub_delivery_seconds has %d routes, want 2", n)
			}
		}
	}
	want := map[string]float64{"mem/ok": 1, "down/retry": 2, "down/failed": 1}
	for k, v := range want {
		if outcomes[k] != v {
			t.Errorf("hub_delivery_total %s = %v, want %v (all: %v)", k, outcomes[k], v, outcomes)
		}
	}

	t.Run("OneHubPerRegisterer", func(t *testing.T) {
		if _, err := hub.New(hub.WithRegisterer(reg)); hub.Code(err) != hub.AlreadyExists {
			t.Fatalf("second New on the same registerer = %v, want AlreadyExists", err)
		}
	})
}
