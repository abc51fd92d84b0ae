package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/outbox"
)

// TestE2E_PostgresStore runs the binary with its store on PostgreSQL (a schema of its
// own): the River ledger, the outbox and kdbstream all in the database, for several hub
// processes to share. An event posted to the ingress lands in the kdbstream stream and
// reaches a signed webhook, both written in the ingress's transaction (no outbox row).
func TestE2E_PostgresStore(t *testing.T) {
	t.Parallel()
	pgURL := testenv.PostgresURL(t)
	name := testenv.Name(t)
	schema := "e2e_" + name[len(name)-26:] // the ULID: unique, within PostgreSQL's limits
	ctx := testenv.Context(t, 2*time.Minute)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, pgURL)
		if err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			conn.Close(ctx)
		}
	})
	h := newPGHub(t, pgURL, schema)
	p := startHub(t, h.cfg, h.admin)
	h.deliverOne(t)
	// Both destinations live in the store's schema: the ingress wrote the stream entry
	// and the delivery in its own transaction, and no outbox row was needed.
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "river_job"}.Sanitize()+" WHERE queue = $1",
		outbox.DefaultQueue).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("%d outbox rows (%v); want 0: the kdbstream entry and the delivery are written in the ingress's transaction", rows, err)
	}
	if code := p.stop(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0\n%s", code, p.log())
	}
}

// streamLength is the length of the stream of transport name as the admin API at admin
// reports it (-1 when it cannot be read).
func streamLength(admin, name string) int {
	resp, err := http.Get("http://" + admin + "/transports")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var ts []struct {
		Name   string
		Status struct{ Length int }
	}
	_ = json.Unmarshal(b, &ts)
	for _, tr := range ts {
		if tr.Name == name {
			return tr.Status.Length
		}
	}
	return -1
}

// pgHub is a config of the binary with its store in a PostgreSQL schema: the ingress,
// a kdbstream stream and the webhook transport, every event to both through the
// outbox route; and a receiver for the webhooks.
type pgHub struct {
	cfg, dir, ingress, admin string
	rc                       *receiver
	hook                     string
}

// newPGHub writes the config, its store at url in schema.
func newPGHub(t *testing.T, url, schema string) *pgHub {
	t.Helper()
	h := &pgHub{dir: t.TempDir(), ingress: freeAddr(t), admin: freeAddr(t), rc: &receiver{ids: map[string]int{}}}
	srv := httptest.NewServer(h.rc)
	t.Cleanup(srv.Close)
	h.hook = srv.URL + "/hook"
	h.cfg = writeConfig(t, h.dir, fmt.Sprintf(`
store:
  postgres: %s
  schema: %s
sources:
  ingress: {type: http, listen: "%s"}
transports:
  events: {type: kdbstream, stream: events}
  webhooks:
    type: webhook
    allow: [127.0.0.1]
routes:
  - {pattern: "#", to: [events, webhooks], delivery: outbox}
admin: {listen: "%s"}
`, url, schema, h.ingress, h.admin))
	return h
}

// deliverOne registers the receiver as an endpoint of the running hub, posts one event
// and waits for its signed webhook and its entry in the stream (the first).
func (h *pgHub) deliverOne(t *testing.T) {
	t.Helper()
	h.rc.mu.Lock()
	h.rc.secret = []byte(registerEndpoint(t, h.admin, "", h.hook))
	h.rc.mu.Unlock()
	id := cloudevent.NewID()
	if status, body, err := postJSON("http://"+h.ingress+"/events", "application/cloudevents+json", "", erasedEvent(id)); err != nil || status != http.StatusAccepted {
		t.Fatalf("POST: %d %v %s", status, err, body)
	}
	testenv.WaitFor(t, 30*time.Second, "the signed webhook", func() bool { return h.rc.has(id) })
	testenv.WaitFor(t, 30*time.Second, "the entry in the kdbstream stream on PostgreSQL", func() bool {
		return streamLength(h.admin, "events") == 1
	})
}
