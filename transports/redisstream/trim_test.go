package redisstream

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
)

func TestR6_Trimming(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := testenv.Context(t, time.Minute)
	t.Run("MaxLenApprox", func(t *testing.T) {
		t.Parallel()
		stream := testenv.Name(t)
		t.Cleanup(func() { c.Del(context.Background(), stream) })
		tr, err := New(c, Config{Stream: stream, MaxLen: 100})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		for range 10 {
			if err := tr.Send(ctx, newEvents(t, 100)); err != nil {
				t.Fatal(err)
			}
		}
		// MAXLEN ~ stops at macro-node boundaries (100 entries per node by default), so
		// the stream keeps at least 100 and at most 100 + one node.
		n, err := c.XLen(ctx, stream).Result()
		if err != nil || n < 100 || n > 300 {
			t.Fatalf("XLEN after 1000 appends with MaxLen 100 = %d, %v", n, err)
		}
	})
	t.Run("DefaultIsR6", func(t *testing.T) {
		t.Parallel()
		tr, err := New(c, Config{Stream: "x"})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if tr.cfg.MaxLen != 100000 {
			t.Fatalf("default MaxLen = %d, want 100000 (R6)", tr.cfg.MaxLen)
		}
	})
	t.Run("NegativeDisablesCap", func(t *testing.T) {
		t.Parallel()
		stream := testenv.Name(t)
		t.Cleanup(func() { c.Del(context.Background(), stream) })
		tr, err := New(c, Config{Stream: stream, MaxLen: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if err := tr.Send(ctx, newEvents(t, 300)); err != nil {
			t.Fatal(err)
		}
		if n, _ := c.XLen(ctx, stream).Result(); n != 300 {
			t.Fatalf("XLEN = %d, want 300", n)
		}
	})
	t.Run("MinIDAge", func(t *testing.T) {
		t.Parallel()
		stream := testenv.Name(t)
		t.Cleanup(func() { c.Del(context.Background(), stream) })
		// 200 entries "two hours old" (explicit ids), then a Send with a one-hour age.
		old := time.Now().Add(-2 * time.Hour).UnixMilli()
		pipe := c.Pipeline()
		for i := range 200 {
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: strconv.FormatInt(old, 10) + "-" + strconv.Itoa(i+1), Values: []string{"k", "v"}})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		tr, err := New(c, Config{Stream: stream, MinIDAge: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if err := tr.Send(ctx, newEvents(t, 2)); err != nil {
			t.Fatal(err)
		}
		// MINID ~ removes whole macro nodes only; 200 old entries fill at least one.
		if n, _ := c.XLen(ctx, stream).Result(); n >= 202 {
			t.Fatalf("XLEN = %d after an age trim: old entries were kept", n)
		}
	})
}
