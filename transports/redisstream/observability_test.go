package redisstream

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// recordLog keeps every slog record's message, level and attribute keys.
type recordLog struct {
	mu   sync.Mutex
	recs []logRec
}

type logRec struct {
	msg   string
	level slog.Level
	keys  []string
}

func (l *recordLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *recordLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *recordLog) WithGroup(string) slog.Handler            { return l }
func (l *recordLog) Handle(_ context.Context, r slog.Record) error {
	rec := logRec{msg: r.Message, level: r.Level}
	r.Attrs(func(a slog.Attr) bool { rec.keys = append(rec.keys, a.Key); return true })
	l.mu.Lock()
	l.recs = append(l.recs, rec)
	l.mu.Unlock()
	return nil
}

func (l *recordLog) find(msg string) (logRec, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.recs {
		if r.msg == msg {
			return r, true
		}
	}
	return logRec{}, false
}

// TestR8_LogsAndMetrics checks the five R8 records carry exactly their fields, at the
// documented levels, and the three R8 metrics move.
func TestR8_LogsAndMetrics(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	stream := testenv.Name(t)
	logs := &recordLog{}
	logger := slog.New(logs)
	metrics := hub.NewStreamMetrics(prometheus.NewRegistry())
	tr, err := New(c, Config{Stream: stream, Logger: logger, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close(); c.Del(context.Background(), stream, stream+":dlq") })
	cons, err := NewConsumer(c, streams.ConsumerConfig{
		Stream: stream, Group: "obs-test", Consumer: "c1", Start: "0", Block: 100 * time.Millisecond,
		ClaimMinIdle: 100 * time.Millisecond, ClaimInterval: 50 * time.Millisecond,
		Logger: logger, Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	good := streamtest.NewEvent(t, "user.created", "u1")
	bad := streamtest.NewEvent(t, "user.deleted", "u2")
	dlq := make(chan struct{})
	var calls sync.Map
	if err := cons.Start(context.Background(), func(_ context.Context, ev *cloudevent.Event) error {
		if ev.ID == good.ID {
			return nil
		}
		n, _ := calls.LoadOrStore(ev.ID, new(int))
		*n.(*int)++
		if *n.(*int) == 3 {
			defer close(dlq)
		}
		return errors.New("boom")
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cons.Close() })
	if err := tr.Send(context.Background(), []*cloudevent.Event{good, bad}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-dlq:
	case <-time.After(20 * time.Second):
		t.Fatal("the failing event was not retried to the DLQ")
	}
	streamtest.WaitLen(t, harness(t), stream+":dlq", 1)
	// The consumer counts and logs the move after the backend call that made the DLQ
	// entry visible, so the record can trail the entry by a moment.
	testenv.WaitFor(t, 5*time.Second, "the event_dlq record", func() bool {
		_, ok := logs.find("event_dlq")
		return ok
	})

	want := map[string]struct {
		keys  []string
		level slog.Level
	}{
		"event_emitted":  {[]string{"type", "event_id", "subject_id", "stream"}, slog.LevelDebug},
		"event_received": {[]string{"type", "event_id", "group", "consumer"}, slog.LevelDebug},
		"event_acked":    {[]string{"type", "event_id", "elapsed_ms"}, slog.LevelDebug},
		"event_failed":   {[]string{"type", "event_id", "error", "retry_count"}, slog.LevelWarn},
		"event_dlq":      {[]string{"type", "event_id", "final_error"}, slog.LevelWarn},
	}
	for msg, w := range want {
		r, ok := logs.find(msg)
		if !ok {
			t.Errorf("no %s record", msg)
			continue
		}
		if !slices.Equal(r.keys, w.keys) || r.level != w.level {
			t.Errorf("%s: keys %v at %v, want %v at %v", msg, r.keys, r.level, w.keys, w.level)
		}
	}
	count := func(outcome string) float64 {
		return testutil.ToFloat64(metrics.EventCount.WithLabelValues(DefaultName, stream, outcome))
	}
	if count("emitted") != 2 || count("acked") != 1 || count("failed") != 3 || count("received") < 4 {
		t.Errorf("event_count_total: emitted %v acked %v failed %v received %v", count("emitted"), count("acked"), count("failed"), count("received"))
	}
	if n := testutil.ToFloat64(metrics.DLQ.WithLabelValues(DefaultName, stream, "max_deliveries")); n != 1 {
		t.Errorf("event_dlq_total = %v, want 1", n)
	}
	if n := testutil.CollectAndCount(metrics.Lag, "event_lag_seconds"); n != 1 {
		t.Errorf("event_lag_seconds series = %d, want 1", n)
	}
}
