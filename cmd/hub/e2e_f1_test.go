package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
)

// TestF1_FailureEventReadableAfterRestart runs the real binary with a direct route to a
// Redis that is down: the last attempt's hub.transport.failed event is recorded in the
// store's hub.failures stream under the event's tenant and counted; after a SIGTERM and a
// restart, `hub tail --failures` reads it from the same SQLite file.
func TestF1_FailureEventReadableAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ingress, admin, down := freeAddr(t), freeAddr(t), freeAddr(t) // nobody listens on down
	db := filepath.Join(dir, "data", "hub.db")
	cfg := writeConfig(t, dir, `
store:
  sqlite: data/hub.db
sources:
  ingress: {type: http, listen: "`+ingress+`"}
transports:
  cache:
    type: redisstream
    url: redis://`+down+`/0
    stream: e2e:f1
routes:
  - pattern: "#"
    to: cache
    retry: {attempts: 2, backoff: 10ms}
admin:
  listen: "`+admin+`"
`)
	p := startHubProbe(t, cfg, admin, "/healthz") // /readyz stays 503: the Redis is down
	// Sources start after the admin listener: wait for the ingress itself.
	testenv.WaitFor(t, 30*time.Second, "the ingress to listen", func() bool {
		c, err := net.Dial("tcp", ingress)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	id := cloudevent.NewID()
	status, body, err := postJSON("http://"+ingress+"/events", "application/cloudevents+json", "", erasedEvent(id))
	if err != nil || status != http.StatusAccepted {
		t.Fatalf("POST: %d %v %s", status, err, body)
	}
	const recorded = `hub_failure_events_total{outcome="recorded",sink="hub.failures"} 1`
	testenv.WaitFor(t, 30*time.Second, "the failure to be recorded", func() bool {
		return strings.Contains(metricsText(t, admin), recorded)
	})
	if m := metricsText(t, admin); !strings.Contains(m, `hub_transport_failed_total{route="cache:#"} 1`) {
		t.Errorf("hub_transport_failed_total not 1:\n%s", grepLines(m, "failed"))
	}
	if code := p.stop(); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.log())
	}

	p = startHubProbe(t, cfg, admin, "/healthz")
	defer p.stop()
	out, err := exec.Command(binary(t), "tail", "--kdb", db, "--failures", "--from", "0", "--no-follow").CombinedOutput()
	if err != nil {
		t.Fatalf("hub tail: %v\n%s", err, out)
	}
	var evs []*cloudevent.Event
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		ev, err := cloudevent.ParseJSON(sc.Bytes())
		if err != nil {
			t.Fatalf("tail line %s: %v", sc.Bytes(), err)
		}
		evs = append(evs, ev)
	}
	if len(evs) != 1 {
		t.Fatalf("hub tail --failures printed %d events, want 1:\n%s", len(evs), out)
	}
	fe := evs[0]
	var tf hub.TransportFailure
	_ = json.Unmarshal(fe.Data, &tf)
	if fe.Type != hub.TypeTransportFailed || fe.TenantID() != "acme" || fe.Subject != id || tf.EventID != id ||
		tf.EventType != "identity.user.erased" || tf.Route != "cache:#" || tf.Attempts != 2 || tf.Code != "Unavailable" {
		t.Errorf("failure event %s\ndata %+v", out, tf)
	}
	text, err := exec.Command(binary(t), "tail", "--kdb", db, "--failures", "--from", "0", "--no-follow", "-o", "text").CombinedOutput()
	if err != nil || !strings.Contains(string(text), "failed="+id) || !strings.Contains(string(text), "route=cache:#") {
		t.Errorf("hub tail -o text: %v\n%s", err, text)
	}
}

func metricsText(t *testing.T, admin string) string {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// Every series carries the replica's hub_instance label; the assertions here are
	// about one process, so they read the series without it.
	return instanceLabel.ReplaceAllString(string(b), "")
}

var instanceLabel = regexp.MustCompile(`hub_instance="[^"]*",?`)

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
