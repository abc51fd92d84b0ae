package natsjs

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
	wm "github.com/koder/eventhub/transports/watermill"
)

// rawMsg returns the stream's message with sequence seq.
func (b *testBundle) rawMsg(t *testing.T, stream string, seq uint64) *jetstream.RawStreamMsg {
	t.Helper()
	s, err := b.js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(context.Background(), seq)
	if err != nil {
		t.Fatalf("GetMsg %s/%d: %v", stream, seq, err)
	}
	return m
}

// consumerInfo reads a durable's state. The durables are push consumers, which only
// nats.go's older JetStream API reads.
func (b *testBundle) consumerInfo(durable string) (*nats.ConsumerInfo, error) {
	js, err := b.nc.JetStream()
	if err != nil {
		return nil, err
	}
	return js.ConsumerInfo(b.stream, durable)
}

// TestWM_NATSBinding pins the wire form: the CloudEvents NATS binding in binary mode
// (ce- headers, content-type, the data as payload, subject <prefix>.<type>,
// Nats-Msg-Id = id), percent-encoding only for what cannot travel raw, and structured
// mode.
func TestWM_NATSBinding(t *testing.T) {
	t.Parallel()
	t.Run("Binary", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tr := newTransport(t, b.config())
		ev := transporttest.FullEvent()
		if err := tr.Send(context.Background(), []*cloudevent.Event{ev}); err != nil {
			t.Fatal(err)
		}
		m := b.rawMsg(t, b.stream, 1)
		if m.Subject != b.subject+"."+ev.Type {
			t.Fatalf("subject %q", m.Subject)
		}
		want := map[string]string{
			"ce-specversion": "1.0", "ce-id": ev.ID, "ce-type": ev.Type, "ce-source": ev.Source,
			"ce-subject": ev.Subject, "content-type": ev.DataContentType, "ce-dataschema": ev.DataSchema,
			"ce-time": "2026-11-30T09:58:01.123456Z", "ce-tenantid": "tenant-ü-1", "ce-count": "-7",
			"ce-note": "multi%0Aline%20\"quoted\"%20,=;%20✓", nats.MsgIdHdr: ev.ID, HeaderEncoded: "ce-note",
		}
		for k, v := range want {
			if got := m.Header.Get(k); got != v {
				t.Errorf("header %s = %q, want %q", k, got, v)
			}
		}
		if !strings.Contains(m.Header.Get(HeaderExtTypes), "count:integer") {
			t.Errorf("%s = %q", HeaderExtTypes, m.Header.Get(HeaderExtTypes))
		}
		if string(m.Data) != string(ev.Data) {
			t.Errorf("payload %q", m.Data)
		}
	})
	t.Run("Structured", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		cfg := b.config()
		cfg.Mode = wm.ModeStructured
		tr := newTransport(t, cfg)
		ev := transporttest.FullEvent()
		if err := tr.Send(context.Background(), []*cloudevent.Event{ev}); err != nil {
			t.Fatal(err)
		}
		m := b.rawMsg(t, b.stream, 1)
		if ct := m.Header.Get(HeaderContentType); ct != wm.ContentTypeStructured {
			t.Fatalf("content-type %q", ct)
		}
		if m.Header.Get("ce-id") != "" {
			t.Fatal("structured mode has ce- headers")
		}
		got, err := cloudevent.ParseJSON(m.Data)
		if err != nil || got.ID != ev.ID {
			t.Fatalf("payload: %v, %v", got, err)
		}
	})
}

// TestWM_NATSDeadLetter: a failing event is redelivered by the server until its
// MaxDeliveries-th delivery, then stored in the dead-letter stream with the reason,
// its delivery count and the event intact, and acked; a malformed message goes there
// at once.
func TestWM_NATSDeadLetter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config()
	cfg.Durable = "dl"
	cfg.MaxDeliveries = 3
	tr := newTransport(t, cfg)
	var calls atomic.Int32
	c := newConsumer(t, cfg)
	if err := c.Start(context.Background(), func(context.Context, *cloudevent.Event) error {
		calls.Add(1)
		return errors.New("boom")
	}); err != nil {
		t.Fatal(err)
	}
	ev := transporttest.FullEvent()
	if err := tr.Send(context.Background(), []*cloudevent.Event{ev}); err != nil {
		t.Fatal(err)
	}
	// A message that is no CloudEvent at all.
	if _, err := b.js.Publish(context.Background(), b.subject+".junk", []byte("not an event")); err != nil {
		t.Fatal(err)
	}
	dlq := cfg.WithDefaults()
	testenv.WaitFor(t, 20*time.Second, "two dead letters", func() bool {
		s, err := b.js.Stream(context.Background(), dlq.DeadLetterStream)
		if err != nil {
			return false
		}
		info, err := s.Info(context.Background())
		return err == nil && info.State.Msgs == 2
	})
	byReason := map[string]*jetstream.RawStreamMsg{}
	for seq := uint64(1); seq <= 2; seq++ {
		m := b.rawMsg(t, dlq.DeadLetterStream, seq)
		if m.Subject != dlq.DeadLetterSubject {
			t.Errorf("dead letter subject %q, want %q", m.Subject, dlq.DeadLetterSubject)
		}
		byReason[m.Header.Get(wm.MetaDLQReason)] = m
	}
	failed := byReason[wm.ReasonMaxDeliveries]
	if failed == nil || failed.Header.Get(wm.MetaDLQDeliveries) != "3" || failed.Header.Get(wm.MetaDLQError) != "boom" {
		t.Fatalf("max_deliveries dead letter: %+v", failed)
	}
	if calls.Load() != 3 {
		t.Fatalf("handler ran %d times, want 3", calls.Load())
	}
	got, err := wm.Decode(mustUnmarshal(t, failed))
	if err != nil || !reflect.DeepEqual(ev, got) {
		t.Fatalf("dead-lettered event: %v\n%s", err, transporttest.Diff(ev, got))
	}
	if byReason[wm.ReasonMalformed] == nil {
		t.Fatalf("no malformed dead letter: %v", byReason)
	}
	// Both originals are acked: nothing pending on the durable.
	testenv.WaitFor(t, 10*time.Second, "no pending acks", func() bool {
		info, err := b.consumerInfo(cfg.Durable)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})
}

func mustUnmarshal(t *testing.T, m *jetstream.RawStreamMsg) *message.Message {
	t.Helper()
	msg, err := Marshaler{}.Unmarshal(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// TestWM_NATSDurableAckAfterProcessing: the durable acks an event only once its
// handler returned; a consumer that stops resumes, under the same durable, after the
// last acked event; an event whose handler had not finished is delivered again.
func TestWM_NATSDurableAckAfterProcessing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config()
	cfg.Durable = "resume"
	cfg.AckWait = time.Second // the unfinished event comes back quickly
	cfg.DrainTimeout = 200 * time.Millisecond
	tr := newTransport(t, cfg)
	evs := transporttest.NewEvents(3)
	if err := tr.Send(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 10)
	release := make(chan struct{})
	c1, err := NewConsumer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.Start(context.Background(), func(ctx context.Context, ev *cloudevent.Event) error {
		seen <- ev.ID
		if ev.ID == evs[1].ID {
			select { // never finishes: Close gives up on it
			case <-release:
			case <-ctx.Done():
			}
			return ctx.Err()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if id := <-seen; id != evs[i].ID {
			t.Fatalf("delivery %d: %s, want %s", i, id, evs[i].ID)
		}
	}
	// evs[1]'s handler is running: delivered, not acked.
	info, err := b.consumerInfo(cfg.Durable)
	if err != nil || info.NumAckPending < 1 || info.AckFloor.Consumer != 1 {
		t.Fatalf("while evs[1] runs: %+v, %v (want ack floor 1, evs[1] pending)", info, err)
	}
	if err := c1.Close(); hub.Code(err) != hub.DeadlineExceeded {
		t.Fatalf("Close with a stuck handler: %v, want DeadlineExceeded", err)
	}
	close(release)
	c2 := newConsumer(t, cfg)
	if err := c2.Start(context.Background(), func(_ context.Context, ev *cloudevent.Event) error { seen <- ev.ID; return nil }); err != nil {
		t.Fatal(err)
	}
	// evs[1] comes back (nacked at Close, or after AckWait) and evs[2] arrives; the
	// server does not order a redelivery before newer events.
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case id := <-seen:
			if id == evs[0].ID {
				t.Fatal("evs[0] was acked and came back")
			}
			got[id] = true
		case <-time.After(20 * time.Second):
			t.Fatalf("after restart got %v, want evs[1] and evs[2]", got)
		}
	}
}

// TestWM_NATSPatterns: one pattern becomes the durable's subject filter; others are
// applied in process, the rest acked unhandled.
func TestWM_NATSPatterns(t *testing.T) {
	t.Parallel()
	if got := filterSubject("ev", []string{"user.*"}); got != "ev.user.*" {
		t.Fatalf("filter %q", got)
	}
	for _, ps := range [][]string{{"#"}, {"*"}, {"user.#"}, {"a.*", "b.*"}} {
		if got := filterSubject("ev", ps); got != "ev.>" {
			t.Fatalf("%v: filter %q", ps, got)
		}
	}
	b := setup(t)
	cfg := b.config()
	cfg.Durable = "pat"
	cfg.Patterns = []string{"user.#", "order.paid"}
	tr := newTransport(t, cfg)
	got := make(chan string, 10)
	c := newConsumer(t, cfg)
	if err := c.Start(context.Background(), func(_ context.Context, ev *cloudevent.Event) error { got <- ev.Type; return nil }); err != nil {
		t.Fatal(err)
	}
	var evs []*cloudevent.Event
	for _, typ := range []string{"user", "order.created", "user.created.v2", "order.paid", "hub.transport.failed"} {
		ev := transporttest.NewEvent(0)
		ev.Type = typ
		evs = append(evs, ev)
	}
	if err := tr.Send(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"user", "user.created.v2", "order.paid"} {
		select {
		case typ := <-got:
			if typ != want {
				t.Fatalf("got %s, want %s", typ, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never came", want)
		}
	}
	if err := tr.Send(context.Background(), []*cloudevent.Event{{ID: "x", Source: "/s", SpecVersion: "1.0", Type: "bad type", Extensions: map[string]any{"tenantid": "t"}}}); hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("type with a blank: %v, want InvalidArgument", err)
	}
}

// TestWM_NATSNoStream: publishing where no stream listens is NotFound, not a silent loss.
func TestWM_NATSNoStream(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config()
	f := false
	cfg.CreateStream = &f
	tr := newTransport(t, cfg)
	err := tr.Send(context.Background(), []*cloudevent.Event{transporttest.NewEvent(1)})
	if hub.Code(err) != hub.NotFound {
		t.Fatalf("Send without a stream: %v (%v), want NotFound", err, hub.Code(err))
	}
}
