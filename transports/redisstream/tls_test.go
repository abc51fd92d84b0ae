package redisstream

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/internal/testenv/redisproc"
	"github.com/koder/eventhub/streams"
)

// TestR7_TLSAndAuth runs the transport against a redis-server of its own that speaks
// only TLS (certificates generated here) and admits only the ACL user alice.
func TestR7_TLSAndAuth(t *testing.T) {
	t.Parallel()
	ca, cert, key, pool := testCerts(t, t.TempDir())
	srv := redisproc.StartWith(t, func(port int) []string {
		return []string{
			"--port", "0", "--tls-port", strconv.Itoa(port),
			"--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", ca, "--tls-auth-clients", "no",
			"--user", "default", "off", "--user", "alice", "on", ">s3cret", "~*", "&*", "+@all",
			"--user", "bob", "on", ">pw2", "~*", "&*", "+@all", "-client",
		}
	})
	base := "rediss://alice:s3cret@127.0.0.1:" + strconv.Itoa(srv.Port) + "/0"
	connect := func(t *testing.T, raw string, trust bool) (*Transport, *redis.Client) {
		stream := testenv.Name(t)
		opts, cfg, err := ParseURL(raw+"?stream="+stream+"&dial_timeout=2s&max_retries=-1", Config{Logger: testenv.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		if trust {
			opts.TLSConfig.RootCAs = pool
		}
		client := redis.NewClient(opts)
		t.Cleanup(func() { _ = client.Close() })
		tr, err := New(client, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tr.Close() })
		return tr, client
	}

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("redis-server log:\n%s", srv.Log())
		}
	})
	roundTrip := func(t *testing.T, raw, user string) {
		tr, client := connect(t, raw, true)
		stream := tr.cfg.Stream
		c, err := NewConsumer(client, streams.ConsumerConfig{
			Stream: stream, Group: "auth-erasure-cascade", Consumer: "c1", Start: "0",
			Block: 100 * time.Millisecond, Logger: testenv.Logger(t),
		})
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		if err := c.Start(testenv.Context(t, time.Minute), func(_ context.Context, ev *cloudevent.Event) error {
			got <- ev.ID
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		ev := streamtest.NewEvent(t, "identity.user.erased", "user-u123")
		if err := tr.Send(testenv.Context(t, 10*time.Second), []*cloudevent.Event{ev}); err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-got:
			if id != ev.ID {
				t.Fatalf("got %s, want %s", id, ev.ID)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("event not consumed over TLS")
		}
		who, err := client.Do(context.Background(), "ACL", "WHOAMI").Text()
		if err != nil || who != user {
			t.Fatalf("ACL WHOAMI = %q, %v", who, err)
		}
	}
	t.Run("RoundTripOverTLSWithACLUser", func(t *testing.T) { roundTrip(t, base, "alice") })
	// bob may not run CLIENT: the consumer's interruptible read falls back to a plain one.
	t.Run("ACLUserWithoutClientCommand", func(t *testing.T) {
		roundTrip(t, "rediss://bob:pw2@127.0.0.1:"+strconv.Itoa(srv.Port)+"/0", "bob")
	})
	t.Run("WrongPasswordIsPermissionDenied", func(t *testing.T) {
		tr, _ := connect(t, "rediss://alice:nope@127.0.0.1:"+strconv.Itoa(srv.Port)+"/0", true)
		err := tr.Send(testenv.Context(t, 10*time.Second), newEvents(t, 1))
		if hub.Code(err) != hub.PermissionDenied {
			t.Fatalf("Send with a wrong password: %v (code %v), want PermissionDenied", err, hub.Code(err))
		}
	})
	t.Run("NoCredentialsIsPermissionDenied", func(t *testing.T) {
		tr, _ := connect(t, "rediss://127.0.0.1:"+strconv.Itoa(srv.Port)+"/0", true)
		err := tr.Send(testenv.Context(t, 10*time.Second), newEvents(t, 1))
		if hub.Code(err) != hub.PermissionDenied {
			t.Fatalf("Send without AUTH: %v (code %v), want PermissionDenied", err, hub.Code(err))
		}
	})
	t.Run("UntrustedCertificateIsPermissionDenied", func(t *testing.T) {
		tr, _ := connect(t, base, false)
		err := tr.Send(testenv.Context(t, 10*time.Second), newEvents(t, 1))
		if hub.Code(err) != hub.PermissionDenied {
			t.Fatalf("Send to an untrusted server: %v (code %v), want PermissionDenied", err, hub.Code(err))
		}
	})
}
