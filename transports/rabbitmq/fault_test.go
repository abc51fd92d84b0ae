//go:build fault

package rabbitmq

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
)

// The fault tests force-close the broker connections of a vhost and user they create
// with rabbitmqctl, so other tests on the same broker are never disturbed. They need
// rabbitmqctl on PATH with rights to administer the local node (root in CI).

// faultEnv is a private vhost and user, deleted at cleanup.
type faultEnv struct {
	user string
	url  string
}

func rabbitmqctl(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command("rabbitmqctl", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("rabbitmqctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func newFaultEnv(t testing.TB) *faultEnv {
	t.Helper()
	testenv.RabbitURL(t)
	if _, err := exec.LookPath("rabbitmqctl"); err != nil {
		t.Fatalf("fault tests need rabbitmqctl: %v", err)
	}
	name := testenv.Name(t)
	vhost, user, pass := "vh_"+name, "u_"+name, "p_"+name
	rabbitmqctl(t, "add_vhost", vhost)
	t.Cleanup(func() { _ = exec.Command("rabbitmqctl", "delete_vhost", vhost).Run() })
	rabbitmqctl(t, "add_user", user, pass)
	t.Cleanup(func() { _ = exec.Command("rabbitmqctl", "delete_user", user).Run() })
	rabbitmqctl(t, "set_permissions", "-p", vhost, user, ".*", ".*", ".*")
	return &faultEnv{user: user, url: fmt.Sprintf("amqp://%s:%s@127.0.0.1:5672/%s", user, pass, vhost)}
}

func (e *faultEnv) dropConnections(t testing.TB) {
	rabbitmqctl(t, "close_all_user_connections", e.user, "fault test")
}

// TestFault_ConnectionsClosedWhilePublishingAndConsuming publishes from several
// goroutines and consumes at the same time while every connection is force-closed
// three times. Sends during an outage must fail (never report success without a
// confirm); afterwards every confirmed event must be handled.
func TestFault_ConnectionsClosedWhilePublishingAndConsuming(t *testing.T) {
	t.Parallel()
	env := newFaultEnv(t)
	cfg := Config{URL: env.url, Exchange: "fault", Queue: "fault.group", RetryDelay: 50 * time.Millisecond,
		ReconnectMin: 50 * time.Millisecond, ReconnectMax: 500 * time.Millisecond, Concurrency: 4, Channels: 3}
	c, err := NewConsumer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	var mu sync.Mutex
	handled := map[string]int{}
	if err := c.Start(context.Background(), func(_ context.Context, ev *cloudevent.Event) error {
		mu.Lock()
		handled[ev.ID]++
		mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	var (
		confirmedMu sync.Mutex
		confirmed   []string
		attempts    atomic.Int64
		failures    atomic.Int64
		wrongCode   atomic.Int64
		stop        = make(chan struct{})
		wg          sync.WaitGroup
	)
	for p := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				batch := []*cloudevent.Event{testEvent("fault.event"), testEvent("fault.event")}
				attempts.Add(int64(len(batch)))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := tr.Send(ctx, batch)
				cancel()
				if err != nil {
					failures.Add(int64(len(batch)))
					if !hub.IsRetryable(err) {
						wrongCode.Add(1)
					}
					time.Sleep(5 * time.Millisecond) // a publisher backing off, as the hub's retry would
					continue
				}
				confirmedMu.Lock()
				for _, ev := range batch {
					confirmed = append(confirmed, ev.ID)
				}
				confirmedMu.Unlock()
				_ = p
			}
		})
	}
	confirmedCount := func() int {
		confirmedMu.Lock()
		defer confirmedMu.Unlock()
		return len(confirmed)
	}
	for round := range 3 {
		before := confirmedCount()
		testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("progress before drop %d", round+1), func() bool { return confirmedCount() >= before+200 })
		env.dropConnections(t)
	}
	before := confirmedCount()
	testenv.WaitFor(t, 30*time.Second, "publishing to resume after the last drop", func() bool { return confirmedCount() >= before+200 })
	close(stop)
	wg.Wait()

	confirmedMu.Lock()
	ids := append([]string(nil), confirmed...)
	confirmedMu.Unlock()
	missing := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var m []string
		for _, id := range ids {
			if handled[id] == 0 {
				m = append(m, id)
			}
		}
		return m
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(missing()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	m := missing()
	mu.Lock()
	distinct := len(handled)
	mu.Unlock()
	summary := fmt.Sprintf("attempted %d, confirmed %d, failed sends %d (non-retryable codes: %d), handled distinct %d, confirmed but never handled %d",
		attempts.Load(), len(ids), failures.Load(), wrongCode.Load(), distinct, len(m))
	if len(m) > 0 || wrongCode.Load() > 0 {
		t.Fatalf("%s; first missing: %v", summary, m[:min(len(m), 5)])
	}
	t.Log(summary)
}

// TestFault_SendDuringOutageIsUnavailable closes the connections and, while the
// transport has not reconnected yet, checks that a Send fails with Unavailable; then it
// checks that Send succeeds again once the connection is back.
func TestFault_SendDuringOutageIsUnavailable(t *testing.T) {
	t.Parallel()
	env := newFaultEnv(t)
	off := false
	cfg := Config{URL: env.url, Exchange: "fault", Mandatory: &off, ReconnectMin: 2 * time.Second, ReconnectMax: 2 * time.Second}
	tr, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	mustSend(t, tr, testEvent("a.b"))
	env.dropConnections(t)
	testenv.WaitFor(t, 10*time.Second, "the transport to notice the loss", func() bool { return tr.Health(context.Background()) != nil })
	if err := tr.Send(context.Background(), []*cloudevent.Event{testEvent("a.b")}); hub.Code(err) != hub.Unavailable {
		t.Fatalf("Send during the outage = %v (code %v), want Unavailable", err, hub.Code(err))
	}
	testenv.WaitFor(t, 30*time.Second, "reconnection", func() bool { return tr.Health(context.Background()) == nil })
	mustSend(t, tr, testEvent("a.b"))
}
