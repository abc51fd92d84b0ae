package rabbitmq

import (
	"context"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
)

// testBundle is what a test needs: a unique exchange and group queue, a raw admin
// channel for assertions, and cleanup that deletes everything it declared.
type testBundle struct {
	url      string
	exchange string
	queue    string
	admin    *amqp.Channel
	conn     *amqp.Connection
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	url := testenv.RabbitURL(t)
	name := testenv.Name(t)
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatalf("dial %s: %v", redact(url), err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{url: url, exchange: "ex." + name, queue: "q." + name, admin: ch, conn: conn}
	t.Cleanup(func() {
		// A fresh channel: the admin one may have been closed by a failed assertion.
		if c, err := conn.Channel(); err == nil {
			for _, q := range []string{b.queue, b.queue + ".retry", DLQName(b.queue), b.queue + ".b", b.queue + ".b.retry", DLQName(b.queue + ".b")} {
				_, _ = c.QueueDelete(q, false, false, false)
			}
			_ = c.ExchangeDelete(b.exchange, false, false)
		}
		_ = conn.Close()
	})
	return b
}

// config returns a Config aimed at the bundle's exchange and queue, with test timings.
func (b *testBundle) config(t testing.TB) Config {
	return Config{
		URL: b.url, Exchange: b.exchange, Queue: b.queue,
		RetryDelay: 50 * time.Millisecond, DrainTimeout: 5 * time.Second,
		ReconnectMin: 50 * time.Millisecond, ReconnectMax: 500 * time.Millisecond,
		Logger: testenv.Logger(t),
	}
}

func newTransport(t testing.TB, cfg Config) *Transport {
	t.Helper()
	tr, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// newConsumer creates the group's topology (so publishes are routable) without
// starting it.
func newConsumer(t testing.TB, cfg Config) *Consumer {
	t.Helper()
	c, err := NewConsumer(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewConsumer: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// queueDepth is the number of ready messages in q.
func (b *testBundle) queueDepth(t testing.TB, q string) int {
	t.Helper()
	info, err := b.admin.QueueDeclarePassive(q, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("QueueDeclarePassive(%s): %v", q, err)
	}
	return info.Messages
}

// recorder collects handled events and signals each on a channel.
type recorder struct {
	mu     sync.Mutex
	events []*cloudevent.Event
	got    chan *cloudevent.Event
	fail   func(ev *cloudevent.Event, n int) error
	counts map[string]int
}

func newRecorder() *recorder {
	return &recorder{got: make(chan *cloudevent.Event, 10000), counts: map[string]int{}}
}

func (r *recorder) handle(_ context.Context, ev *cloudevent.Event) error {
	r.mu.Lock()
	r.counts[ev.ID]++
	n := r.counts[ev.ID]
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		if err := fail(ev, n); err != nil {
			r.got <- nil
			return err
		}
	}
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	r.got <- ev
	return nil
}

func (r *recorder) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[id]
}

// waitN waits for n successful handlings.
func (r *recorder) waitN(t testing.TB, n int, what string) []*cloudevent.Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	var out []*cloudevent.Event
	for len(out) < n {
		select {
		case ev := <-r.got:
			if ev != nil {
				out = append(out, ev)
			}
		case <-deadline:
			t.Fatalf("%s: handled %d of %d events", what, len(out), n)
		}
	}
	return out
}

func testEvent(typ string) *cloudevent.Event {
	ev := cloudevent.New("/eventhub/rabbitmq-test", typ)
	ev.SetTenantID("tenant-1")
	_ = ev.SetData("application/json", map[string]any{"k": "v"})
	return ev
}

func mustSend(t testing.TB, tr hub.Transport, evs ...*cloudevent.Event) {
	t.Helper()
	if err := tr.Send(context.Background(), evs); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, what, cond)
}

// queueExists checks q on a throwaway channel (a failed passive declare closes it).
func (b *testBundle) queueExists(t testing.TB, q string) bool {
	t.Helper()
	ch, err := b.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	_, err = ch.QueueDeclarePassive(q, true, false, false, false, nil)
	return err == nil
}
