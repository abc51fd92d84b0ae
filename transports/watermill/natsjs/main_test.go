package natsjs

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"
)

// TestMain keeps one stream of this run alive while the tests create and delete theirs
// in parallel: nats-server 2.9 removes the account's streams directory with its last
// stream, and a stream created at that moment fails with "could not create storage
// directory" (JSStreamStoreFailedF). The anchor stream is deleted after the run; without
// a server the tests report it themselves (testenv).
func TestMain(m *testing.M) {
	url := os.Getenv("HUB_TEST_NATS_URL")
	if url == "" {
		url = "nats://127.0.0.1:4222"
	}
	var cleanup func()
	nc, err := nats.Connect(url, nats.Timeout(2*time.Second))
	if err == nil {
		if js, err := jetstream.New(nc); err == nil {
			name := "T_anchor_" + ulid.Make().String()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"t_anchor_" + name}}); err == nil {
				cleanup = func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_ = js.DeleteStream(ctx, name)
				}
			}
			cancel()
		}
	}
	code := m.Run()
	if cleanup != nil {
		cleanup()
	}
	if nc != nil {
		nc.Close()
	}
	os.Exit(code)
}
