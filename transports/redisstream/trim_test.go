package redisstream

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
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

// TestE8_CategoryStreamsKeepSevenDays: per-category streams (events.<word>) are trimmed
// by age, 7 days by default (E8), and have no MAXLEN cap; R1 streams keep MAXLEN ~
// 100000 (R6) and no age trim.
func TestE8_CategoryStreamsKeepSevenDays(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := testenv.Context(t, time.Minute)
	category := "c" + strings.ToLower(ulid.Make().String())
	stream := streams.CategoryPrefix + category
	t.Cleanup(func() { c.Del(context.Background(), stream) })
	// 200 entries eight days old and 200 six days old (explicit ids), then one Send.
	pipe := c.Pipeline()
	for _, age := range []time.Duration{8 * 24 * time.Hour, 6 * 24 * time.Hour} {
		ms := strconv.FormatInt(time.Now().Add(-age).UnixMilli(), 10)
		for i := range 200 {
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: ms + "-" + strconv.Itoa(i+1), Values: []string{"k", "v"}})
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	tr, err := New(c, Config{Naming: streams.NamingCategory})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.cfg.MinIDAge != RetentionE8 || tr.cfg.MaxLen >= 0 {
		t.Fatalf("category defaults MaxLen %d, MinIDAge %s; want no cap and 7 days", tr.cfg.MaxLen, tr.cfg.MinIDAge)
	}
	if err := tr.Send(ctx, []*cloudevent.Event{streamtest.NewEvent(t, category+".created", "u1")}); err != nil {
		t.Fatal(err)
	}
	// MINID ~ removes whole macro nodes only, so some 8-day-old entries may stay; the
	// six-day-old ones and the new one must.
	msgs, err := c.XRange(ctx, stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	eightDays := time.Now().Add(-7 * 24 * time.Hour).UnixMilli()
	old := 0
	for _, m := range msgs {
		if ms, _ := strconv.ParseInt(strings.SplitN(m.ID, "-", 2)[0], 10, 64); ms < eightDays {
			old++
		}
	}
	if old >= 200 || len(msgs)-old != 201 {
		t.Fatalf("after the age trim: %d entries older than 7 days (of 200), %d younger (want 201)", old, len(msgs)-old)
	}
	t.Run("R1StreamsByLength", func(t *testing.T) {
		t.Parallel()
		r1, err := New(c, Config{Service: "id"})
		if err != nil {
			t.Fatal(err)
		}
		defer r1.Close()
		if r1.cfg.MaxLen != DefaultMaxLen || r1.cfg.MinIDAge != 0 || r1.trim != nil {
			t.Fatalf("R1 defaults MaxLen %d, MinIDAge %s; want 100000 and no age trim", r1.cfg.MaxLen, r1.cfg.MinIDAge)
		}
	})
}
