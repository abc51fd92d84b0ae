// Package testenv finds the real services tests talk to and gives each test unique names.
//
// A service URL comes from its HUB_TEST_* variable or the loopback default. When the
// service does not answer, the test fails under CI=true (a green run must mean the
// service was exercised) and is skipped with a loud reason elsewhere.
package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// Service defaults, overridable by environment variables.
const (
	DefaultRedisURL    = "redis://127.0.0.1:6379/0"
	DefaultRabbitURL   = "amqp://guest:guest@127.0.0.1:5672/"
	DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	DefaultNATSURL     = "nats://127.0.0.1:4222"
)

// InCI reports whether tests run under CI, where a missing service is a failure.
func InCI() bool { return os.Getenv("CI") == "true" }

func lookup(env, def string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

// RedisURL returns the Redis URL (HUB_TEST_REDIS_URL) after checking that it answers.
func RedisURL(t testing.TB) string {
	return require(t, "Redis", lookup("HUB_TEST_REDIS_URL", DefaultRedisURL))
}

// RabbitURL returns the RabbitMQ URL (HUB_TEST_RABBITMQ_URL) after checking that it answers.
func RabbitURL(t testing.TB) string {
	return require(t, "RabbitMQ", lookup("HUB_TEST_RABBITMQ_URL", DefaultRabbitURL))
}

// PostgresURL returns the PostgreSQL URL (HUB_TEST_POSTGRES_URL) after checking that it answers.
func PostgresURL(t testing.TB) string {
	return require(t, "PostgreSQL", lookup("HUB_TEST_POSTGRES_URL", DefaultPostgresURL))
}

// NATSURL returns the NATS (JetStream) URL (HUB_TEST_NATS_URL) after checking that it answers.
func NATSURL(t testing.TB) string {
	return require(t, "NATS", lookup("HUB_TEST_NATS_URL", DefaultNATSURL))
}

func require(t testing.TB, name, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("testenv: bad %s URL: %v", name, err)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"redis": "6379", "rediss": "6379", "amqp": "5672", "amqps": "5671", "postgres": "5432", "postgresql": "5432", "nats": "4222", "tls": "4222"}[u.Scheme])
	}
	conn, err := net.DialTimeout("tcp", host, 2*time.Second)
	if err != nil {
		msg := fmt.Sprintf("testenv: %s is not reachable at %s: %v", name, host, err)
		if InCI() {
			t.Fatal(msg + " (CI=true: a test that needs a service fails without it)")
		}
		t.Skip("SKIPPING: " + msg)
	}
	conn.Close()
	return raw
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// Name returns a name unique to this test run: the test's name, cleaned, plus a ULID.
// Streams, queues, exchanges and schemas created by tests use it so parallel tests and
// repeated runs never share state.
func Name(t testing.TB) string {
	n := strings.Trim(unsafeChars.ReplaceAllString(t.Name(), "_"), "_")
	if len(n) > 40 {
		n = n[len(n)-40:]
	}
	return strings.ToLower(n + "_" + ulid.Make().String())
}

// Context returns a context cancelled at the end of the test (or after d, whichever first).
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// WaitFor polls cond until it returns true or the timeout (doubled under CI) passes.
// It is for conditions that only the outside world can signal (a Redis entry, an HTTP
// request); code under test should offer a channel instead.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if InCI() {
		timeout *= 2
	}
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Logger returns a slog.Logger that writes to the test log.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
