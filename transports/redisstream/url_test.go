package redisstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

func TestR7_URL(t *testing.T) {
	t.Parallel()
	t.Run("TLSWithUserAndPassword", func(t *testing.T) {
		t.Parallel()
		opts, cfg, err := ParseURL("rediss://alice:s3cret@redis.internal:6380/2?service=id&max_len=500&min_id_age=168h&max_batch=50&pipelines=3&name=bus&dial_timeout=2s", Config{})
		if err != nil {
			t.Fatal(err)
		}
		if opts.Addr != "redis.internal:6380" || opts.Username != "alice" || opts.Password != "s3cret" || opts.DB != 2 || opts.TLSConfig == nil || opts.DialTimeout != 2*time.Second {
			t.Fatalf("options %+v", opts)
		}
		if cfg.Service != "id" || cfg.MaxLen != 500 || cfg.MinIDAge != RetentionE8 || cfg.MaxBatch != 50 || cfg.Pipelines != 3 || cfg.Name != "bus" {
			t.Fatalf("config %+v", cfg)
		}
	})
	t.Run("PlainKeepsBase", func(t *testing.T) {
		t.Parallel()
		opts, cfg, err := ParseURL("redis://127.0.0.1:6379/0?naming=category", Config{MaxLen: 7})
		if err != nil || opts.TLSConfig != nil || cfg.Naming != streams.NamingCategory || cfg.MaxLen != 7 {
			t.Fatalf("opts %+v cfg %+v err %v", opts, cfg, err)
		}
	})
	t.Run("ErrorsAreRedacted", func(t *testing.T) {
		t.Parallel()
		for _, raw := range []string{
			"rediss://alice:s3cret@host:6379/0?bogus=1",
			"rediss://alice:s3cret@host:6379/0?max_len=many",
			"rediss://alice:s3cret@host:6379/0?service=a&service=b",
			"rediss://alice:s3cret@host:6379/zero",
			"http://alice:s3cret@host:6379/0",
			"rediss://alice:s3cret@host:6379/0\x7f",
		} {
			_, _, err := ParseURL(raw, Config{})
			if hub.Code(err) != hub.InvalidArgument {
				t.Errorf("ParseURL(%q): %v, want InvalidArgument", streams.Redact(raw), err)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error shows the password: %v", err)
			}
		}
		if got := streams.Redact("rediss://alice:s3cret@host:6379/0"); strings.Contains(got, "s3cret") {
			t.Errorf("Redact = %q", got)
		}
	})
	t.Run("InvalidConfigFails", func(t *testing.T) {
		t.Parallel()
		if _, err := Open(context.Background(), "redis://127.0.0.1:1/0?naming=sideways"); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("Open with naming=sideways: %v", err)
		}
	})
}

// TestR7_URLFromEnvironment cannot run in parallel: it sets KODER_REDIS_URL.
func TestR7_URLFromEnvironment(t *testing.T) {
	base := testenv.RedisURL(t)
	t.Setenv(EnvURL, "")
	if _, err := Open(context.Background(), ""); hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("Open without URL or %s: %v", EnvURL, err)
	}
	stream := testenv.Name(t)
	t.Setenv(EnvURL, base+"?stream="+stream)
	tr, err := Open(testenv.Context(t, 10*time.Second), "")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.Send(context.Background(), newEvents(t, 1)); err != nil {
		t.Fatal(err)
	}
	if n, err := tr.Client().XLen(context.Background(), stream).Result(); err != nil || n != 1 {
		t.Fatalf("XLEN %s = %d, %v", stream, n, err)
	}
	tr.Client().Del(context.Background(), stream)
}
