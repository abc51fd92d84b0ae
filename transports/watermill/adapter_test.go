package watermill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	wmlib "github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
)

// Behaviour of the adapter that needs no broker, on Watermill's in-memory gochannel.

func newGoChannel(t *testing.T) *gochannel.GoChannel {
	t.Helper()
	gc := gochannel.NewGoChannel(gochannel.Config{Persistent: true}, wmlib.NopLogger{})
	t.Cleanup(func() { _ = gc.Close() })
	return gc
}

func TestWM_CodecModes(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{ModeBinary, ModeStructured} {
		for _, ev := range []*cloudevent.Event{transporttest.FullEvent(), transporttest.BinaryEvent(), transporttest.MinimalEvent()} {
			msg, err := Encode(ev, mode)
			if err != nil {
				t.Fatal(err)
			}
			if msg.UUID != ev.ID {
				t.Fatalf("%s: UUID %q, want the event id", mode, msg.UUID)
			}
			got, err := Decode(msg)
			if err != nil {
				t.Fatal(err)
			}
			want := ev
			if mode == ModeStructured {
				want = transporttest.JSONExtensions(ev)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("%s:\n%s", mode, transporttest.Diff(want, got))
			}
		}
	}
	if _, err := Encode(transporttest.MinimalEvent(), "fast"); hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("bad mode: %v", err)
	}
	bad := []*message.Message{
		func() *message.Message {
			m, _ := Encode(transporttest.MinimalEvent(), ModeStructured)
			m.UUID = "other"
			return m
		}(),
		func() *message.Message {
			m := message.NewMessage("x", []byte("[]"))
			m.Metadata.Set(MetaContentType, "application/cloudevents-batch+json")
			return m
		}(),
		func() *message.Message {
			m := message.NewMessage("x", nil)
			m.Metadata.Set(MetaContentType, "a/b; =")
			return m
		}(),
		message.NewMessage("plain", []byte("no attributes")),
	}
	for i, m := range bad {
		if _, err := Decode(m); hub.Code(err) != hub.InvalidArgument {
			t.Errorf("bad message %d: %v, want InvalidArgument", i, err)
		}
	}
}

// FuzzDecode: any message is decoded or refused as InvalidArgument, never a panic, and
// a decoded event encodes and decodes back unchanged.
func FuzzDecode(f *testing.F) {
	full, _ := Encode(transporttest.FullEvent(), ModeStructured)
	f.Add("evt_1", "", []byte(full.Payload), "ce_specversion", "1.0", "ce_tenantid", "t")
	f.Add("evt_1", "application/cloudevents+json", []byte(full.Payload), "ce_type", "x", "x", "y")
	f.Add("e", "", []byte("data"), "ce_specversion", "1.0", MetaDeliveries, "2")
	f.Add("e", "", []byte(nil), cloudevent.MetaExtTypes, "n:integer", "ce_n", "x")
	f.Fuzz(func(t *testing.T, uuid, ct string, payload []byte, k1, v1, k2, v2 string) {
		m := message.NewMessage(uuid, payload)
		if ct != "" {
			m.Metadata.Set(MetaContentType, ct)
		}
		m.Metadata.Set(k1, v1)
		m.Metadata.Set(k2, v2)
		m.Metadata.Set("ce_source", "/s")
		m.Metadata.Set("ce_type", "t")
		ev, err := Decode(m)
		if err != nil {
			if hub.Code(err) != hub.InvalidArgument {
				t.Fatalf("error code %v: %v", hub.Code(err), err)
			}
			return
		}
		again, err := Encode(ev, ModeBinary)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := Decode(again)
		if err != nil || !reflect.DeepEqual(ev, back) {
			t.Fatalf("changed: %v\n%s", err, transporttest.Diff(ev, back))
		}
	})
}

// TestWM_ErrorCode pins DefaultErrorCode's table.
func TestWM_ErrorCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want hub.ErrorCode
	}{
		{nil, hub.OK},
		{context.Canceled, hub.Canceled},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), hub.DeadlineExceeded},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, hub.Unavailable},
		{fmt.Errorf("cannot connect: %w", syscall.ECONNRESET), hub.Unavailable},
		{io.ErrUnexpectedEOF, hub.Unavailable},
		{hub.Errorf(hub.NotFound, "no queue"), hub.NotFound},
		{errors.New("something else"), hub.Unknown},
	}
	for _, c := range cases {
		if got := DefaultErrorCode(c.err); got != c.want {
			t.Errorf("DefaultErrorCode(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// recordingPublisher records Publish calls; block, when set, holds each call.
type recordingPublisher struct {
	mu     sync.Mutex
	calls  map[string][]int
	block  chan struct{}
	err    error
	closed atomic.Bool
}

func (p *recordingPublisher) Publish(topic string, msgs ...*message.Message) error {
	if p.block != nil {
		<-p.block
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls == nil {
		p.calls = map[string][]int{}
	}
	p.calls[topic] = append(p.calls[topic], len(msgs))
	return p.err
}

func (p *recordingPublisher) Close() error { p.closed.Store(true); return nil }

func TestWM_TransportBatchesAndTopics(t *testing.T) {
	t.Parallel()
	pub := &recordingPublisher{}
	tr, err := NewTransport(pub, Config{MaxBatch: 2, TopicFor: func(ev *cloudevent.Event) (string, error) {
		if ev.Type == "bad" {
			return "", errors.New("no topic")
		}
		return "t." + ev.Type, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	evs := transporttest.NewEvents(5)
	evs[3].Type = "other"
	if err := tr.Send(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"t." + transporttest.EventType: {2, 2}, "t.other": {1}}
	if !reflect.DeepEqual(pub.calls, want) {
		t.Fatalf("Publish calls %v, want %v", pub.calls, want)
	}
	evs[0].Type = "bad"
	if err := tr.Send(context.Background(), evs[:1]); hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("unplaceable event: %v", err)
	}
	if _, err := NewTransport(pub, Config{}); hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("no topic: %v", err)
	}
	if err := tr.Close(); err != nil || pub.closed.Load() {
		t.Fatalf("Close: %v; publisher closed %v (it was passed in)", err, pub.closed.Load())
	}
}

// TestWM_TransportContext: with GuardPublish, Send stops waiting for a hung Publish
// when ctx ends, and a publish error is classified.
func TestWM_TransportContext(t *testing.T) {
	t.Parallel()
	pub := &recordingPublisher{block: make(chan struct{})}
	defer close(pub.block)
	tr, err := NewTransport(pub, Config{Topic: "x", GuardPublish: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := tr.Send(ctx, transporttest.NewEvents(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hung Publish: %v, want DeadlineExceeded", err)
	}
	failing := &recordingPublisher{err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	tr2, _ := NewTransport(failing, Config{Topic: "x"})
	if err := tr2.Send(context.Background(), transporttest.NewEvents(1)); hub.Code(err) != hub.Unavailable {
		t.Fatalf("refused: %v", err)
	}
}

// consumerBundle is a consumer on a gochannel topic with its dead-letter topic read.
type consumerBundle struct {
	gc    *gochannel.GoChannel
	tr    *Transport
	c     *Consumer
	dlq   <-chan *message.Message
	topic string
}

func setupConsumer(t *testing.T, cfg ConsumerConfig, h hub.Handler) *consumerBundle {
	t.Helper()
	gc := newGoChannel(t)
	b := &consumerBundle{gc: gc, topic: "events"}
	cfg.Topic = b.topic
	if cfg.DeadLetter == nil && cfg.MaxDeliveries != NeverDeadLetter {
		cfg.DeadLetter = gc
	}
	var err error
	if b.dlq, err = gc.Subscribe(context.Background(), b.topic+DeadLetterSuffix); err != nil {
		t.Fatal(err)
	}
	if b.tr, err = NewTransport(gc, Config{Topic: b.topic}); err != nil {
		t.Fatal(err)
	}
	if b.c, err = NewConsumer(gc, cfg); err != nil {
		t.Fatal(err)
	}
	if err := b.c.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.c.Close() })
	return b
}

func (b *consumerBundle) deadLetter(t *testing.T) *message.Message {
	t.Helper()
	select {
	case m := <-b.dlq:
		m.Ack()
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no dead letter")
		return nil
	}
}

// TestWM_ConsumerDeadLetters: a failing event is nacked until its MaxDeliveries-th
// delivery (counted in process: gochannel reports no count), then dead-lettered with
// the reason; a malformed message and a panicking handler are handled too.
func TestWM_ConsumerDeadLetters(t *testing.T) {
	t.Parallel()
	t.Run("MaxDeliveries", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		b := setupConsumer(t, ConsumerConfig{MaxDeliveries: 3}, func(context.Context, *cloudevent.Event) error {
			calls.Add(1)
			return errors.New("boom")
		})
		ev := transporttest.FullEvent()
		if err := b.tr.Send(context.Background(), []*cloudevent.Event{ev}); err != nil {
			t.Fatal(err)
		}
		dl := b.deadLetter(t)
		if calls.Load() != 3 || dl.Metadata.Get(MetaDLQReason) != ReasonMaxDeliveries || dl.Metadata.Get(MetaDLQError) != "boom" ||
			dl.Metadata.Get(MetaDLQDeliveries) != "3" || dl.Metadata.Get(MetaDLQTopic) != b.topic {
			t.Fatalf("calls %d, dead letter %v", calls.Load(), dl.Metadata)
		}
		got, err := Decode(dl)
		if err != nil || !reflect.DeepEqual(ev, got) {
			t.Fatalf("dead-lettered event: %v\n%s", err, transporttest.Diff(ev, got))
		}
	})
	t.Run("Malformed", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		b := setupConsumer(t, ConsumerConfig{}, func(context.Context, *cloudevent.Event) error { calls.Add(1); return nil })
		if err := b.gc.Publish(b.topic, message.NewMessage("m1", []byte("junk"))); err != nil {
			t.Fatal(err)
		}
		dl := b.deadLetter(t)
		if dl.UUID != "m1" || dl.Metadata.Get(MetaDLQReason) != ReasonMalformed || calls.Load() != 0 {
			t.Fatalf("dead letter %s %v, handler calls %d", dl.UUID, dl.Metadata, calls.Load())
		}
	})
	t.Run("Panic", func(t *testing.T) {
		t.Parallel()
		b := setupConsumer(t, ConsumerConfig{MaxDeliveries: 1}, func(context.Context, *cloudevent.Event) error { panic("bad handler") })
		if err := b.tr.Send(context.Background(), transporttest.NewEvents(1)); err != nil {
			t.Fatal(err)
		}
		if dl := b.deadLetter(t); dl.Metadata.Get(MetaDLQReason) != ReasonMaxDeliveries {
			t.Fatalf("dead letter %v", dl.Metadata)
		}
	})
	t.Run("UnknownVersion", func(t *testing.T) {
		t.Parallel()
		b := setupConsumer(t, ConsumerConfig{Versions: rejectAll{}}, func(context.Context, *cloudevent.Event) error { return nil })
		if err := b.tr.Send(context.Background(), transporttest.NewEvents(1)); err != nil {
			t.Fatal(err)
		}
		if dl := b.deadLetter(t); dl.Metadata.Get(MetaDLQReason) != ReasonUnknownVersion {
			t.Fatalf("dead letter %v", dl.Metadata)
		}
	})
	t.Run("DeadLetterRequired", func(t *testing.T) {
		t.Parallel()
		if _, err := NewConsumer(newGoChannel(t), ConsumerConfig{Topic: "x"}); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("no DeadLetter: %v", err)
		}
		if _, err := NewConsumer(newGoChannel(t), ConsumerConfig{Topic: "x", MaxDeliveries: NeverDeadLetter}); err != nil {
			t.Fatalf("NeverDeadLetter without DeadLetter: %v", err)
		}
	})
}

type rejectAll struct{}

func (rejectAll) CheckVersion(*cloudevent.Event) error { return errors.New("unknown major") }

// TestWM_ConsumerLifecycle: Start after Close and twice fail; Close is idempotent and
// safe before Start; Close waits for a running handler up to DrainTimeout, then
// cancels it and reports DeadlineExceeded.
func TestWM_ConsumerLifecycle(t *testing.T) {
	t.Parallel()
	gc := newGoChannel(t)
	c, err := NewConsumer(gc, ConsumerConfig{Topic: "x", MaxDeliveries: NeverDeadLetter, DrainTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close before Start: %v", err)
	}
	if err := c.Start(context.Background(), func(context.Context, *cloudevent.Event) error { return nil }); hub.Code(err) != hub.FailedPrecondition {
		t.Fatalf("Start after Close: %v", err)
	}
	running := make(chan struct{})
	c2, _ := NewConsumer(gc, ConsumerConfig{Topic: "x", MaxDeliveries: NeverDeadLetter, DrainTimeout: 100 * time.Millisecond})
	h := func(ctx context.Context, _ *cloudevent.Event) error { close(running); <-ctx.Done(); return ctx.Err() }
	if err := c2.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	if err := c2.Start(context.Background(), h); hub.Code(err) != hub.FailedPrecondition {
		t.Fatalf("second Start: %v", err)
	}
	tr, _ := NewTransport(gc, Config{Topic: "x"})
	if err := tr.Send(context.Background(), transporttest.NewEvents(1)); err != nil {
		t.Fatal(err)
	}
	<-running
	if err := c2.Close(); hub.Code(err) != hub.DeadlineExceeded {
		t.Fatalf("Close with a stuck handler: %v, want DeadlineExceeded", err)
	}
	if err := c2.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestWM_LazyPublisher(t *testing.T) {
	t.Parallel()
	var builds atomic.Int32
	fail := true
	pub := LazyPublisher(func() (message.Publisher, error) {
		builds.Add(1)
		if fail {
			return nil, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
		}
		return &recordingPublisher{}, nil
	})
	tr, _ := NewTransport(pub, Config{Topic: "x", ClosePublisher: true})
	if err := tr.Send(context.Background(), transporttest.NewEvents(1)); hub.Code(err) != hub.Unavailable {
		t.Fatalf("broker down: %v", err)
	}
	fail = false
	for range 2 {
		if err := tr.Send(context.Background(), transporttest.NewEvents(1)); err != nil {
			t.Fatal(err)
		}
	}
	if builds.Load() != 2 {
		t.Fatalf("%d builds, want 2 (one failed, one kept)", builds.Load())
	}
	_ = tr.Close()
	if err := pub.Publish("x"); err == nil {
		t.Fatal("Publish after Close succeeded")
	}
}
