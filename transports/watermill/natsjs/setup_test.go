package natsjs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/koder/eventhub/internal/testenv"
)

// testBundle is one test's corner of the shared NATS server: a stream and a subject
// prefix of its own (JetStream streams may not share subjects), deleted with their
// dead-letter stream at cleanup.
type testBundle struct {
	url     string
	stream  string
	subject string
	nc      *nats.Conn
	js      jetstream.JetStream
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	url := testenv.NATSURL(t)
	name := testenv.Name(t)
	b := &testBundle{url: url, stream: "T_" + name, subject: "t_" + name}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	b.nc = nc
	if b.js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, s := range []string{b.stream, b.stream + DeadLetterStreamSuffix} {
			if err := b.js.DeleteStream(ctx, s); err != nil && !strings.Contains(err.Error(), "not found") {
				t.Logf("delete stream %s: %v", s, err)
			}
		}
		nc.Close()
	})
	return b
}

// config is the bundle's Config with waits shortened for tests.
func (b *testBundle) config() Config {
	return Config{
		URL: b.url, Stream: b.stream, Subject: b.subject,
		AckWait: 5 * time.Second, RetryDelay: 50 * time.Millisecond, DrainTimeout: 5 * time.Second,
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

func newConsumer(t testing.TB, cfg Config) *Consumer {
	t.Helper()
	c, err := NewConsumer(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewConsumer: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
