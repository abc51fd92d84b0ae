package redisstream

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv/redisproc"
)

func TestE6_DurabilityWarning(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, srv *redisproc.Server) (durable bool, logged string) {
		c := ownClient(t, srv)
		var buf bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		WarnIfVolatile(ctx, c, slog.New(slog.NewTextHandler(&buf, nil)))
		d, ok := Durable(ctx, c)
		if !ok {
			t.Fatal("CONFIG GET refused on a server the test owns")
		}
		return d, buf.String()
	}
	t.Run("NothingOnDisk", func(t *testing.T) {
		t.Parallel()
		srv := redisproc.Start(t, "--appendonly", "no", "--save", "")
		if d, logged := check(t, srv); d || !strings.Contains(logged, "KEEPS NOTHING ON DISK") {
			t.Fatalf("durable %v, log %q", d, logged)
		}
	})
	t.Run("AppendOnly", func(t *testing.T) {
		t.Parallel()
		srv := redisproc.Start(t)
		if d, logged := check(t, srv); !d || logged != "" {
			t.Fatalf("durable %v, log %q", d, logged)
		}
	})
	t.Run("SnapshotsOnly", func(t *testing.T) {
		t.Parallel()
		srv := redisproc.Start(t, "--appendonly", "no", "--save", "3600 1")
		if d, logged := check(t, srv); !d || logged != "" {
			t.Fatalf("durable %v, log %q", d, logged)
		}
	})
}
