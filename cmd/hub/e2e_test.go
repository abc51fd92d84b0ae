package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
)

// e2eEnv is one hub configuration against the machine's Redis and RabbitMQ and a local
// signed-webhook receiver.
type e2eEnv struct {
	dir, cfg         string
	ingress, admin   string
	token            string
	stream, exchange string
	redis            *redis.Client
	recv             *receiver
	recvURL          string
	rabbitMu         sync.Mutex
	rabbitIDs        map[string]int
	rabbitDone       chan struct{}
}

func setupE2E(t *testing.T) *e2eEnv {
	t.Helper()
	redisURL, rabbitURL := testenv.RedisURL(t), testenv.RabbitURL(t)
	name := testenv.Name(t)
	e := &e2eEnv{dir: t.TempDir(), ingress: freeAddr(t), admin: freeAddr(t), token: "tok-" + name,
		stream: "e2e:" + name, exchange: "e2e." + name, recv: &receiver{ids: map[string]int{}}, rabbitIDs: map[string]int{}}

	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	e.redis = redis.NewClient(opts)
	t.Cleanup(func() { e.redis.Del(ctxFor(t), e.stream); e.redis.Close() })

	// A queue of our own bound to the hub's exchange, read with plain amqp091: what any
	// AMQP consumer would see.
	conn, err := amqp.Dial(rabbitURL)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.ExchangeDeclare(e.exchange, amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(q.Name, "#", e.exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	msgs, err := ch.Consume(q.Name, "", true, true, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.rabbitDone = make(chan struct{})
	go func() {
		defer close(e.rabbitDone)
		for m := range msgs {
			id, _ := m.Headers["cloudEvents:id"].(string)
			e.rabbitMu.Lock()
			e.rabbitIDs[id]++
			e.rabbitMu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ch.ExchangeDelete(e.exchange, false, false)
		conn.Close()
		<-e.rabbitDone
	})

	srv := httptest.NewServer(e.recv)
	t.Cleanup(srv.Close)
	e.recvURL = srv.URL + "/hook"

	e.cfg = writeConfig(t, e.dir, fmt.Sprintf(`
log:
  level: info
store:
  sqlite: data/hub.db
  ledger:
    # a short lease, so rows a killed process held are taken over within seconds
    job_timeout: 5s
    rescue_stuck_jobs_after: 8s
    rescue_interval: 500ms
sources:
  ingress:
    type: http
    listen: %s
transports:
  redis:
    type: redisstream
    url: %s
    stream: %s
  rabbit:
    type: rabbitmq
    url: %s
    exchange: %s
  webhooks:
    type: webhook
    allow: [127.0.0.1]
    retry_schedule: [200ms, 500ms, 1s, 2s]
    attempt_timeout: 2s
routes:
  - pattern: "identity.#"
    to: [redis, rabbit, webhooks]
    delivery: outbox
outbox:
  backoff_base: 100ms
  backoff_max: 1s
admin:
  listen: %s
  token: %s
shutdown_timeout: 20s
`, e.ingress, redisURL, e.stream, rabbitURL, e.exchange, e.admin, e.token))
	return e
}

func (e *e2eEnv) redisIDs(t *testing.T) map[string]int {
	t.Helper()
	msgs, err := e.redis.XRange(ctxFor(t), e.stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, m := range msgs {
		id, _ := m.Values["event_id"].(string)
		out[id]++
	}
	return out
}

func (e *e2eEnv) rabbitHas(ids []string) int {
	e.rabbitMu.Lock()
	defer e.rabbitMu.Unlock()
	n := 0
	for _, id := range ids {
		if e.rabbitIDs[id] > 0 {
			n++
		}
	}
	return n
}

// TestE2E_IngressToEveryTransport posts one event to the real binary's ingress and finds
// it as an R2 entry in Redis, as a CloudEvents message in RabbitMQ and as a signed
// webhook the receiver verifies; an invalid event gets a 400 naming its fields; SIGTERM
// exits 0.
func TestE2E_IngressToEveryTransport(t *testing.T) {
	t.Parallel()
	e := setupE2E(t)
	p := startHub(t, e.cfg, e.admin)
	e.recv.secret = []byte(registerEndpoint(t, e.admin, e.token, e.recvURL))

	id := cloudevent.NewID()
	status, body, err := postJSON("http://"+e.ingress+"/events", "application/cloudevents+json", "", erasedEvent(id))
	if err != nil || status != http.StatusAccepted {
		t.Fatalf("POST: %d %v %s", status, err, body)
	}

	// At least once: a relay attempt that timed out after its append is retried, so a
	// second copy is legitimate; the wait must not hang on it.
	testenv.WaitFor(t, 20*time.Second, "the event as an R2 entry in Redis", func() bool { return e.redisIDs(t)[id] >= 1 })
	msgs, _ := e.redis.XRange(ctxFor(t), e.stream, "-", "+").Result()
	f := msgs[0].Values
	for _, k := range []string{"type", "event_id", "occurred_at", "tenant_id", "subject_id", "actor", "data"} {
		if v, ok := f[k]; !ok || v == "" {
			t.Errorf("R2 field %s missing or empty in the entry: %v", k, f)
		}
	}
	if f["type"] != "identity.user.erased" || f["tenant_id"] != "acme" || !strings.Contains(f["data"].(string), "era_"+id) {
		t.Errorf("R2 entry %v", f)
	}
	testenv.WaitFor(t, 20*time.Second, "the event in RabbitMQ", func() bool { return e.rabbitHas([]string{id}) == 1 })
	testenv.WaitFor(t, 20*time.Second, "the signed webhook", func() bool { return e.recv.has(id) })
	if n := e.recv.rejections(); n > 0 {
		t.Errorf("%d webhook requests failed signature verification", n)
	}

	t.Run("InvalidEventIs400NamingTheFields", func(t *testing.T) {
		bad := strings.Replace(string(erasedEvent("evt_bad")), `"tenantid":"acme",`, "", 1)
		bad = strings.Replace(bad, `"erasure_id":"era_evt_bad",`, "", 1)
		status, body, err := postJSON("http://"+e.ingress+"/events", "application/cloudevents+json", "", []byte(bad))
		if err != nil || status != http.StatusBadRequest {
			t.Fatalf("POST: %d %v %s", status, err, body)
		}
		if !strings.Contains(string(body), `"/tenantid"`) {
			t.Errorf("problem does not name tenantid: %s", body)
		}
		bad = strings.Replace(string(erasedEvent("evt_bad2")), `"erasure_id":"era_evt_bad2",`, "", 1)
		status, body, _ = postJSON("http://"+e.ingress+"/events", "application/cloudevents+json", "", []byte(bad))
		if status != http.StatusBadRequest || !strings.Contains(string(body), `"/data/erasure_id"`) {
			t.Errorf("schema violation: %d %s", status, body)
		}
	})

	t.Run("NoSubjectIs400NamingTheRoute", func(t *testing.T) {
		// The Redis route writes R2 entries, whose subject_id is mandatory (R2), and has
		// no default_subject: an event without a subject is refused before the 202.
		bare := strings.Replace(string(erasedEvent("evt_nosubject")), `"subject":"u1",`, "", 1)
		status, body, err := postJSON("http://"+e.ingress+"/events", "application/cloudevents+json", "", []byte(bare))
		if err != nil || status != http.StatusBadRequest {
			t.Fatalf("POST: %d %v %s", status, err, body)
		}
		if !strings.Contains(string(body), `"/subject"`) || !strings.Contains(string(body), `redis:identity.#`) {
			t.Errorf("problem does not name /subject and the route: %s", body)
		}
	})

	t.Run("AdminNeedsTheToken", func(t *testing.T) {
		resp, err := http.Get("http://" + e.admin + "/routes")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /routes without token: %d", resp.StatusCode)
		}
	})

	if code := p.stop(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0\n%s", code, p.log())
	}
}

// TestE2E_KillRestartLosesNothing kills the binary with SIGKILL while events are being
// posted, restarts it, and checks that every event the ingress accepted (202) reaches
// Redis, RabbitMQ and the webhook receiver (outbox mode: 202 means stored).
func TestE2E_KillRestartLosesNothing(t *testing.T) {
	t.Parallel()
	e := setupE2E(t)
	p := startHub(t, e.cfg, e.admin)
	e.recv.secret = []byte(registerEndpoint(t, e.admin, e.token, e.recvURL))

	var accepted []string
	var nAccepted atomic.Int32
	attempted := 0
	post := func(n int) {
		for range n {
			id := cloudevent.NewID()
			attempted++
			status, _, err := postJSON("http://"+e.ingress+"/events", "application/cloudevents+json", "", erasedEvent(id))
			if err == nil && status == http.StatusAccepted {
				accepted = append(accepted, id)
				nAccepted.Add(1)
			}
		}
	}
	// Kill while posts are in flight: a goroutine posts, the test kills mid-stream, once
	// some posts were accepted (a fixed pause would not ensure any on a slow machine).
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); post(150) }()
	testenv.WaitFor(t, 20*time.Second, "posts accepted before the kill", func() bool { return nAccepted.Load() >= 5 })
	p.kill()
	wg.Wait()
	beforeKill := len(accepted)

	p = startHub(t, e.cfg, e.admin)
	post(50)

	check := func() (r, q, w int) {
		got := e.redisIDs(t)
		for _, id := range accepted {
			if got[id] > 0 {
				r++
			}
		}
		return r, e.rabbitHas(accepted), e.recv.count(accepted)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, q, w := check()
		if r == len(accepted) && q == len(accepted) && w == len(accepted) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("posted %d, accepted %d (%d before the kill); delivered: redis %d, rabbitmq %d, webhook %d\n%s",
				attempted, len(accepted), beforeKill, r, q, w, p.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("posted %d, accepted %d (%d before the kill); all delivered to redis, rabbitmq and webhook", attempted, len(accepted), beforeKill)
	if beforeKill == 0 {
		t.Errorf("no event was accepted before the kill: the test did not exercise a crash mid-flow")
	}
	if code := p.stop(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0\n%s", code, p.log())
	}
}
