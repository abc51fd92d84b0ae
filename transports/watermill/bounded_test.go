package watermill_test

import (
	"context"
	"net"
	"testing"
	"time"

	wmlib "github.com/ThreeDotsLabs/watermill"
	wredis "github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/transports/watermill"
)

// TestWM_BoundedPublishOnHungRedis backs the binary's choice of no GuardPublish for
// watermill-redisstream (Send calls Publish on its own goroutine, no hand-over): against
// a server that accepts and never answers, Send still returns, with an error, once
// go-redis gives up (its read timeout, here 200 ms, and retries), so a hung broker
// cannot hold a hub worker for ever.
func TestWM_BoundedPublishOnHungRedis(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 16)
	t.Cleanup(func() {
		_ = ln.Close()
		for {
			select {
			case c := <-conns:
				_ = c.Close()
			default:
				return
			}
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case conns <- c: // held open, never answered
			default:
				_ = c.Close()
			}
		}
	}()
	client := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), ReadTimeout: 200 * time.Millisecond,
		WriteTimeout: 200 * time.Millisecond, MaxRetries: 1})
	pub, err := wredis.NewPublisher(wredis.PublisherConfig{Client: client}, wmlib.NopLogger{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := watermill.NewTransport(pub, watermill.Config{Topic: "hung", ClosePublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- tr.Send(ctx, []*cloudevent.Event{transporttest.NewEvent(1)}) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Send to a server that never answers succeeded")
		}
		t.Logf("Send returned: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Send to a hung Redis did not return: watermill-redisstream's publish is not bounded")
	}
}
