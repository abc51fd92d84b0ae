package redisstream

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
)

// roundTrips counts go-redis round trips carrying XADDs (single commands and
// pipelines; connection handshakes are not counted) and can hold the first one until
// released.
type roundTrips struct {
	n       atomic.Int32
	cmds    atomic.Int32
	hold    chan struct{} // nil: never hold
	held    chan struct{}
	onceHld sync.Once
}

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "xadd" {
			return next(ctx, cmd)
		}
		r.n.Add(1)
		r.cmds.Add(1)
		r.wait()
		return next(ctx, cmd)
	}
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) == 0 || cmds[0].Name() != "xadd" {
			return next(ctx, cmds)
		}
		r.n.Add(1)
		r.cmds.Add(int32(len(cmds)))
		r.wait()
		return next(ctx, cmds)
	}
}
func (r *roundTrips) wait() {
	if r.hold == nil {
		return
	}
	first := false
	r.onceHld.Do(func() { first = true; close(r.held) })
	if first {
		<-r.hold
	}
}

func TestB2_Pipelining(t *testing.T) {
	t.Parallel()
	t.Run("BatchIsOneRoundTrip", func(t *testing.T) {
		t.Parallel()
		c := newClient(t)
		rt := &roundTrips{}
		c.AddHook(rt)
		stream := testenv.Name(t)
		t.Cleanup(func() { c.Del(context.Background(), stream) })
		tr, err := New(c, Config{Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if err := tr.Send(context.Background(), newEvents(t, 100)); err != nil {
			t.Fatal(err)
		}
		if n, cmds := rt.n.Load(), rt.cmds.Load(); n != 1 || cmds != 100 {
			t.Fatalf("a 100-event Send took %d round trips carrying %d commands, want 1 and 100", n, cmds)
		}
	})
	t.Run("ConcurrentSendsCoalesce", func(t *testing.T) {
		t.Parallel()
		const senders = 20
		c := newClient(t)
		rt := &roundTrips{hold: make(chan struct{}), held: make(chan struct{})}
		c.AddHook(rt)
		stream := testenv.Name(t)
		t.Cleanup(func() { c.Del(context.Background(), stream) })
		tr, err := New(c, Config{Stream: stream, Pipelines: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		var wg sync.WaitGroup
		errs := make(chan error, senders)
		for range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- tr.Send(context.Background(), newEvents(t, 1))
			}()
		}
		<-rt.held // the first round trip is in flight; the other Sends queue behind it
		close(rt.hold)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n, _ := c.XLen(context.Background(), stream).Result(); n != senders {
			t.Fatalf("XLEN = %d, want %d", n, senders)
		}
		if n := rt.n.Load(); n >= senders {
			t.Fatalf("%d concurrent single-event Sends took %d round trips: no coalescing", senders, n)
		}
	})
	t.Run("InvalidEventIsInvalidArgument", func(t *testing.T) {
		t.Parallel()
		tr, err := New(newNilClient(), Config{Stream: "x"})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		ev := cloudevent.New("/x", "user.created") // no tenantid
		if err := tr.Send(context.Background(), []*cloudevent.Event{ev}); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("Send of an event without tenantid: %v", err)
		}
	})
	t.Run("UnreachableIsUnavailable", func(t *testing.T) {
		t.Parallel()
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := l.Addr().String()
		l.Close()
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer c.Close()
		tr, _ := New(c, Config{Stream: "x"})
		defer tr.Close()
		if err := tr.Send(context.Background(), newEvents(t, 3)); hub.Code(err) != hub.Unavailable {
			t.Fatalf("Send to a closed port: %v", err)
		}
	})
}
