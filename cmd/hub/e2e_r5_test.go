package main

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/outbox"
)

// TestR5_IngressDedupeSurvivesRestart runs the real binary on its SQLite store with an
// outbox route: an event accepted before a restart is, after it, answered as a
// duplicate (no second stream entry), and the same id with other content is a 409. The
// stream lives in the ledger's file, so the entry is appended in the request's own
// transaction: no outbox row at all (kdbstream.Transport.SendTx).
func TestR5_IngressDedupeSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ingress, admin := freeAddr(t), freeAddr(t)
	db := filepath.Join(dir, "data", "hub.db")
	cfg := writeConfig(t, dir, `
store:
  sqlite: data/hub.db
sources:
  ingress: {type: http, listen: "`+ingress+`"}
transports:
  events: {type: kdbstream, stream: events}
routes:
  - {pattern: "#", to: events, delivery: outbox}
admin:
  listen: "`+admin+`"
`)
	id := cloudevent.NewID()
	ev := erasedEvent(id)
	post := func(body []byte) (int, string) {
		t.Helper()
		status, b, err := postJSON("http://"+ingress+"/events", "application/cloudevents+json", "", body)
		if err != nil {
			t.Fatal(err)
		}
		return status, string(b)
	}
	sqlDB, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	count := func(q string) int {
		t.Helper()
		var n int
		if err := sqlDB.QueryRow(q, "%"+id+"%").Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	rows := func() int {
		return count(`SELECT count(*) FROM river_job WHERE kind = '` + outbox.Kind + `' AND json_extract(args, '$.event_id') LIKE ?`)
	}
	entries := func() int {
		t.Helper()
		out, err := exec.Command(binary(t), "tail", "--kdb", db, "--stream", "events", "--from", "0", "--no-follow").CombinedOutput()
		if err != nil {
			t.Fatalf("hub tail: %v\n%s", err, out)
		}
		return strings.Count(string(out), `"id":"`+id+`"`)
	}

	p := startHub(t, cfg, admin)
	if status, body := post(ev); status != http.StatusAccepted || !strings.Contains(body, `"accepted":1`) {
		t.Fatalf("first POST: %d %s", status, body)
	}
	if code := p.stop(); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.log())
	}

	p = startHub(t, cfg, admin)
	defer p.stop()
	status, body := post(ev)
	var a struct {
		Accepted   int      `json:"accepted"`
		Duplicates []string `json:"duplicates"`
	}
	_ = json.Unmarshal([]byte(body), &a)
	if status != http.StatusAccepted || a.Accepted != 0 || len(a.Duplicates) != 1 || a.Duplicates[0] != id {
		t.Fatalf("repeat after restart: %d %s, want 202 with %s a duplicate", status, body, id)
	}
	changed := []byte(strings.Replace(string(ev), `"user_id":"u1"`, `"user_id":"u2"`, 1))
	if status, body := post(changed); status != http.StatusConflict || !strings.Contains(body, `"/id"`) {
		t.Fatalf("other content after restart: %d %s, want 409 naming /id", status, body)
	}
	testenv.WaitFor(t, 20*time.Second, "the first event in the stream", func() bool { return entries() >= 1 })
	if n := rows(); n != 0 {
		t.Errorf("%d outbox rows carry %s, want 0 (the entry is written in the request's transaction)", n, id)
	}
	if n := entries(); n != 1 {
		t.Errorf("%d stream entries carry %s, want 1", n, id)
	}
}
