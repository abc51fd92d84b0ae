package rabbitmq

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
)

func TestR8_MetricsAndLogs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config(t)
	cfg.MaxRetries = -1
	reg := prometheus.NewRegistry()
	cfg.Metrics = hub.NewStreamMetrics(reg)
	var logs testenv.LogBuffer
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	c := newConsumer(t, cfg)
	tr := newTransport(t, cfg)
	ok, bad := testEvent("user.created"), testEvent("user.created")
	rec := newRecorder()
	rec.fail = func(ev *cloudevent.Event, _ int) error {
		if ev.ID == bad.ID {
			return errBoom
		}
		return nil
	}
	if err := c.Start(context.Background(), rec.handle); err != nil {
		t.Fatal(err)
	}
	mustSend(t, tr, ok, bad)
	rec.waitN(t, 1, "the good event")
	dlq := cfg.Metrics.DLQ.WithLabelValues(transportLabel, b.queue, reasonMaxDeliveries)
	waitFor(t, "the failed event dead-lettered", func() bool { return testutil.ToFloat64(dlq) == 1 })
	ec := cfg.Metrics.EventCount
	// The consumer counts before it logs, and the good event's ack is not ordered
	// against the dead-lettering, so the records can trail the DLQ count by a moment.
	wantLogs := []string{`"msg":"event_emitted"`, `"msg":"event_received"`, `"msg":"event_acked"`, `"msg":"event_failed"`,
		`"level":"WARN","msg":"event_dlq"`, `"retry_count":0`, `"elapsed_ms":`, `"subject_id":`, `"group":"` + b.queue}
	waitFor(t, "every R8 record written", func() bool {
		out := logs.String()
		for _, want := range wantLogs {
			if !strings.Contains(out, want) {
				return false
			}
		}
		return testutil.ToFloat64(ec.WithLabelValues(transportLabel, b.queue, "acked")) == 1
	})
	for outcome, want := range map[string]float64{"received": 2, "acked": 1, "failed": 1} {
		if got := testutil.ToFloat64(ec.WithLabelValues(transportLabel, b.queue, outcome)); got != want {
			t.Errorf("event_count_total{outcome=%s} = %v, want %v", outcome, got, want)
		}
	}
	if got := testutil.ToFloat64(ec.WithLabelValues(transportLabel, b.exchange, "emitted")); got != 2 {
		t.Errorf("event_count_total{outcome=emitted} = %v, want 2", got)
	}
	if n := testutil.CollectAndCount(cfg.Metrics.Lag); n != 1 {
		t.Errorf("event_lag_seconds has %d series, want 1", n)
	}
}

func TestC1_StructuredMode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config(t)
	cfg.Mode = ModeStructured
	c := newConsumer(t, cfg)
	tr := newTransport(t, cfg)
	rec := newRecorder()
	if err := c.Start(context.Background(), rec.handle); err != nil {
		t.Fatal(err)
	}
	ev := transporttest.FullEvent()
	mustSend(t, tr, ev)
	got := rec.waitN(t, 1, "the structured event")[0]
	if d := transporttest.Diff(ev, got); d != "" {
		t.Fatalf("structured round trip changed the event:\n%s", d)
	}
}
