//go:build ha

package hatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	"github.com/koder/eventhub/transports/webhook"
)

// Load shape: events posted per ingress, and the points (acknowledged events so far)
// at which the faults happen.
const (
	perIngress  = 300
	killAt      = 200 // kill -9 replica a
	restartAt   = 450 // start a again, as a new Redis consumer
	terminateAt = 600 // SIGTERM replica b
	drainWithin = 3 * time.Minute
)

// TestHA_Replicas runs three hub processes on one PostgreSQL schema (River ledger,
// outbox, kdbstream), one Redis stream and consumer group, and one RabbitMQ queue. Load
// goes through all three ingresses; every event is routed through the outbox to Redis,
// RabbitMQ, kdbstream and a signed webhook of the test. Each replica also consumes the
// Redis stream in one group (a relay source, which publishes what it reads back into
// the hub: the group's idempotency record stops the second lap). Mid-flow replica a is
// killed with SIGKILL and later restarted; replica b is stopped with SIGTERM. Then:
// every event an ingress acknowledged is at every destination at least once
// (duplicates are counted and reported), no River job is left unfinished and no Redis
// entry is left pending after a bounded drain, and the killed consumer's pending
// entries were claimed by the survivors.
func TestHA_Replicas(t *testing.T) {
	pgURL, redisURL, rabbitURL := testenv.PostgresURL(t), testenv.RedisURL(t), testenv.RabbitURL(t)
	name := testenv.Name(t)
	suffix := strings.ToLower(name[len(name)-26:]) // the ULID
	schema := "ha_" + suffix
	stream, kstream, group := "ha:"+suffix, "ha-"+suffix, "ha-relay-"+suffix
	exchange, queue := "ha."+suffix, "ha."+suffix
	ctx := testenv.Context(t, 10*time.Minute)
	dir := t.TempDir()
	bin := buildHub(t, dir)

	// Shared services: only this test's schema, keys, exchange and queue are touched.
	ropts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(ropts)
	t.Cleanup(func() {
		bg := context.Background()
		rdb.Del(bg, stream, stream+":dlq")
		var cursor uint64
		for {
			keys, next, err := rdb.Scan(bg, cursor, "koder:processed:"+group+":*", 1000).Result()
			if err != nil {
				break
			}
			if len(keys) > 0 {
				rdb.Del(bg, keys...)
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		_ = rdb.Close()
	})
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), pgURL)
		if err == nil {
			_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = conn.Close(context.Background())
		}
	})
	rabbit := consumeQueue(t, rabbitURL, exchange, queue)

	rc := &receiver{ids: map[string]int{}}
	hook := httptest.NewServer(rc)
	t.Cleanup(hook.Close)

	replicas := make([]*replica, 3)
	for i := range replicas {
		r := &replica{tb: t, name: string(rune('a' + i)), bin: bin, dir: dir, ingress: freeAddr(t), admin: freeAddr(t)}
		r.config = func(consumer string) string {
			return fmt.Sprintf(`
instance_id: replica-%[12]s
store:
  postgres: %[1]s
  schema: %[2]s
  ledger: {max_conns: 6}   # three replicas on the shared test server (max_connections 100)
sources:
  ingress: {type: http, listen: "%[3]s"}
  relay:
    type: redisstream
    url: %[4]s
    stream: %[5]s
    group: %[6]s
    consumer: %[7]s
    block: 200ms
    claim_min_idle: 3s
    claim_interval: 500ms
transports:
  redis: {type: redisstream, url: %[4]s, stream: %[5]s}
  rabbit: {type: rabbitmq, url: %[8]s, exchange: %[9]s}
  events: {type: kdbstream, stream: %[10]s}
  webhooks: {type: webhook, allow: [127.0.0.1]}
routes:
  - {pattern: "#", to: [redis, rabbit, events, webhooks], delivery: outbox}
admin: {listen: "%[11]s"}
`, pgURL, schema, r.ingress, redisURL, stream, group, consumer, rabbitURL, exchange, kstream, r.admin, r.name)
		}
		t.Cleanup(r.stopAtCleanup)
		replicas[i] = r
	}
	// All at once on an empty schema: River's migrations, the kdbstream tables and the
	// webhook tables must each be created once, whoever gets there first.
	errs := make([]error, len(replicas))
	var starting sync.WaitGroup
	for i, r := range replicas {
		starting.Go(func() { errs[i] = r.launch() })
	}
	starting.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	rc.setSecret(registerEndpoint(t, replicas[0].admin, hook.URL+"/hook"))
	consoleAcrossReplicas(t, replicas[0].admin, replicas[1].admin)

	// Load through all three ingresses, faults at fixed points of progress.
	var acked sync.Map // event id -> ingress name
	var nAcked, nRefused atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex // guards replica state changes against the writers' alive() checks
	for _, r := range replicas {
		wg.Go(func() {
			for range perIngress {
				mu.Lock()
				up := r.alive()
				mu.Unlock()
				if !up {
					nRefused.Add(1)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				id := cloudevent.NewID()
				status, _, err := postJSON("http://"+r.ingress+"/events", erasedEvent(id))
				if err == nil && status == http.StatusAccepted {
					acked.Store(id, r.name)
					nAcked.Add(1)
				} else {
					nRefused.Add(1)
				}
			}
		})
	}
	a, b := replicas[0], replicas[1]
	var pendingAtKill int64
	waitAcked := func(n int64) {
		testenv.WaitFor(t, 5*time.Minute, fmt.Sprintf("%d acknowledged events", n), func() bool { return nAcked.Load() >= n })
	}
	waitAcked(killAt)
	mu.Lock()
	deadConsumer := a.consumer()
	a.kill9()
	mu.Unlock()
	pendingAtKill = consumerPending(ctx, rdb, stream, group, deadConsumer)
	t.Logf("kill -9 %s at %d acknowledged; its consumer %s held %d pending entries", a.name, nAcked.Load(), deadConsumer, pendingAtKill)
	waitAcked(restartAt)
	a.start() // outside mu: start takes a while; the writer for a just sees it come back
	t.Logf("restarted %s as consumer %s at %d acknowledged", a.name, a.consumer(), nAcked.Load())
	waitAcked(terminateAt)
	mu.Lock()
	code := b.term()
	mu.Unlock()
	t.Logf("SIGTERM %s at %d acknowledged: exit code %d", b.name, nAcked.Load(), code)
	if code != 0 {
		t.Errorf("%s exited %d after SIGTERM\n%s", b.name, code, b.log())
	}
	wg.Wait()

	var ids []string
	acked.Range(func(k, _ any) bool { ids = append(ids, k.(string)); return true })
	sort.Strings(ids)
	kdb, err := kdbstream.OpenEngine(ctx, pgURL+"&schema="+schema)
	if err != nil {
		t.Fatal(err)
	}
	defer kdb.Close()
	dests := []destination{
		{"redis stream", func() map[string]int { return redisCopies(ctx, t, rdb, stream) }},
		{"rabbitmq queue", rabbit.copies},
		{"kdbstream", func() map[string]int { return kdbCopies(ctx, t, kdb, kstream) }},
		{"webhook", rc.copies},
	}
	start := time.Now()
	var missing map[string][]string
	testenv.WaitFor(t, drainWithin, "every acknowledged event at every destination, no job unfinished, nothing pending", func() bool {
		missing = map[string][]string{}
		for _, d := range dests {
			got := d.read()
			for _, id := range ids {
				if got[id] == 0 {
					missing[d.name] = append(missing[d.name], id)
				}
			}
		}
		return len(missing) == 0 && quiet(ctx, t, rdb, pgURL, schema, stream, group)
	})
	t.Logf("drained %v after the load ended", time.Since(start).Round(time.Second))

	// The accounting table.
	var table bytes.Buffer
	w := tabwriter.NewWriter(&table, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "destination\tacknowledged\tdelivered (distinct)\tcopies\tduplicates\tmissing\t\n")
	for _, d := range dests {
		got := d.read()
		distinct, copies := 0, 0
		for _, id := range ids {
			if got[id] > 0 {
				distinct++
			}
			copies += got[id]
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t\n", d.name, len(ids), distinct, copies, copies-distinct, len(ids)-distinct)
		if distinct != len(ids) {
			t.Errorf("%s is missing %d acknowledged events", d.name, len(ids)-distinct)
		}
	}
	_ = w.Flush()
	t.Logf("posted %d, acknowledged %d, refused or unreachable %d (replica down)\n%s", 3*perIngress, len(ids), nRefused.Load(), table.String())
	t.Logf("each event reaches the streams and the queue twice by design (once from the ingress, once relayed by the Redis group: " +
		"a second publish of the same event); the webhook delivers an event once per endpoint; any copy beyond that is a redelivery")

	// Rebalance: the killed consumer's entries went to the survivors.
	consumers, err := rdb.XInfoConsumers(ctx, stream, group).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range consumers {
		t.Logf("redis consumer %s: pending %d, idle %v", c.Name, c.Pending, c.Idle)
		if c.Name == deadConsumer && c.Pending != 0 {
			t.Errorf("the killed consumer %s still owns %d pending entries: nobody claimed them", c.Name, c.Pending)
		}
	}
	if jobs := unfinishedJobs(ctx, t, pgURL, schema); len(jobs) != 0 {
		t.Errorf("%d River jobs unfinished after the drain:\n%s", len(jobs), strings.Join(jobs, "\n"))
	}

	// Every log line and every metric says which replica it comes from.
	c := replicas[2]
	resp, err := http.Get("http://" + c.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range strings.Split(string(metrics), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") && !strings.Contains(line, `hub_instance="replica-c"`) {
			t.Errorf("metric without hub_instance=replica-c: %s", line)
			break
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(c.log()), "\n")[1:] { // the tail may start mid-line
		if strings.HasPrefix(line, "{") && !strings.Contains(line, `"instance":"replica-c"`) {
			t.Errorf("log line without instance replica-c: %s", line)
			break
		}
	}
}

// destination reads how many copies of each event id a destination holds.
type destination struct {
	name string
	read func() map[string]int
}

func redisCopies(ctx context.Context, t *testing.T, rdb *redis.Client, stream string) map[string]int {
	msgs, err := rdb.XRange(ctx, stream, "-", "+").Result()
	if err != nil {
		t.Fatalf("XRANGE %s: %v", stream, err)
	}
	out := map[string]int{}
	for _, m := range msgs {
		if id, ok := m.Values["event_id"].(string); ok {
			out[id]++
		}
	}
	return out
}

func kdbCopies(ctx context.Context, t *testing.T, eng *engine.Engine, stream string) map[string]int {
	entries, err := eng.XRange(ctx, stream, "-", "+", 0)
	if err != nil {
		t.Fatalf("kdbstream XRANGE %s: %v", stream, err)
	}
	out := map[string]int{}
	for _, e := range entries {
		for i := 0; i+1 < len(e.Fields); i += 2 {
			if e.Fields[i] == "event_id" {
				out[e.Fields[i+1]]++
			}
		}
	}
	return out
}

// consumerPending is the number of entries one consumer of the group holds.
func consumerPending(ctx context.Context, rdb *redis.Client, stream, group, consumer string) int64 {
	cs, err := rdb.XInfoConsumers(ctx, stream, group).Result()
	if err != nil {
		return -1
	}
	for _, c := range cs {
		if c.Name == consumer {
			return c.Pending
		}
	}
	return 0
}

// flow is what moves through the relay loop at one instant: the Redis stream's last
// entry, the group's last read entry and pending count, and the schema's newest River
// job and unfinished ones.
type flow struct {
	lastEntry, lastRead string
	pending             int64
	lastJob             int64
	unfinished          int
}

// quiet reports whether the relay loop has come to rest: the group has read the
// stream's last entry and acknowledged every entry, and no River job is unfinished,
// with no entry appended and no job inserted while that was being read. The loop is a
// cycle (a relay job appends to the stream; the group reads the entry and publishes it
// again, which inserts jobs), so one reading of each part can see every part empty
// while an entry is on its way from one to the next: a second reading of the stream's
// end and the newest job, unchanged, rules that out.
func quiet(ctx context.Context, t *testing.T, rdb *redis.Client, pgURL, schema, stream, group string) bool {
	before, ok := readFlow(ctx, t, rdb, pgURL, schema, stream, group)
	if !ok || before.pending != 0 || before.unfinished != 0 || before.lastRead != before.lastEntry {
		return false
	}
	after, ok := readFlow(ctx, t, rdb, pgURL, schema, stream, group)
	return ok && after == before
}

func readFlow(ctx context.Context, t *testing.T, rdb *redis.Client, pgURL, schema, stream, group string) (flow, bool) {
	var f flow
	info, err := rdb.XInfoStream(ctx, stream).Result()
	if err != nil {
		return f, false
	}
	f.lastEntry = info.LastGeneratedID
	groups, err := rdb.XInfoGroups(ctx, stream).Result()
	if err != nil {
		return f, false
	}
	for _, g := range groups {
		if g.Name == group {
			f.lastRead, f.pending = g.LastDeliveredID, g.Pending
		}
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(id), 0), count(*) FILTER (WHERE state NOT IN ('completed', 'discarded', 'cancelled')) FROM "+
		pgx.Identifier{schema, "river_job"}.Sanitize()).Scan(&f.lastJob, &f.unfinished); err != nil {
		t.Fatal(err)
	}
	return f, true
}

// unfinishedJobs describes the River jobs in the schema that are not completed,
// discarded or cancelled: outbox relays and webhook deliveries still to do.
func unfinishedJobs(ctx context.Context, t *testing.T, pgURL, schema string) []string {
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT format('job %s %s %s attempt %s/%s by %s created %s scheduled %s errors %s', id, kind, state, attempt, max_attempts, attempted_by, created_at, scheduled_at, errors) FROM "+
		pgx.Identifier{schema, "river_job"}.Sanitize()+" WHERE state NOT IN ('completed', 'discarded', 'cancelled') ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// rabbitQueue consumes the test's queue in the background and counts message ids.
type rabbitQueue struct {
	mu  sync.Mutex
	ids map[string]int
}

func (q *rabbitQueue) copies() map[string]int {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make(map[string]int, len(q.ids))
	for k, v := range q.ids {
		out[k] = v
	}
	return out
}

// consumeQueue declares the exchange the hubs publish to and a quorum queue bound to it
// (so publishes are routable before the first hub starts), and consumes it.
func consumeQueue(t *testing.T, url, exchange, queue string) *rabbitQueue {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := conn.Channel(); err == nil {
			_, _ = c.QueueDelete(queue, false, false, false)
			_ = c.ExchangeDelete(exchange, false, false)
		}
		_ = conn.Close()
	})
	if err := ch.ExchangeDeclare(exchange, amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(queue, true, false, false, false, amqp.Table{amqp.QueueTypeArg: amqp.QueueTypeQuorum}); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(queue, "#", exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	deliveries, err := ch.Consume(queue, "hatest", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := &rabbitQueue{ids: map[string]int{}}
	go func() {
		for d := range deliveries {
			q.mu.Lock()
			q.ids[d.MessageId]++
			q.mu.Unlock()
		}
	}()
	return q
}

// receiver is the test's webhook endpoint: it verifies every signature and counts ids.
type receiver struct {
	mu       sync.Mutex
	secret   []byte
	ids      map[string]int
	rejected int
}

func (rc *receiver) setSecret(s string) {
	rc.mu.Lock()
	rc.secret = []byte(s)
	rc.mu.Unlock()
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := webhook.Verify(r.Header.Get(webhook.SignatureHeader), body, [][]byte{rc.secret}, time.Minute, time.Now()); err != nil {
		rc.rejected++
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var ev struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &ev)
	rc.ids[ev.ID]++
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) copies() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.ids))
	for k, v := range rc.ids {
		out[k] = v
	}
	return out
}

// consoleAcrossReplicas signs in to the web console of one replica (no admin token:
// the loopback operator) and opens a page of another with that session, then signs
// out there: behind a load balancer without sticky sessions, an operator's requests
// land on any replica.
func consoleAcrossReplicas(t testing.TB, first, other string) {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// reply is what the test reads of a response (read whole and closed).
	type reply struct {
		what    string // method and URL
		status  int
		cookies []*http.Cookie
		page    string
	}
	do := func(req *http.Request, cookies []*http.Cookie) reply {
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return reply{req.Method + " " + req.URL.String(), resp.StatusCode, resp.Cookies(), string(b)}
	}
	get := func(addr, path string, cookies ...*http.Cookie) reply {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		return do(req, cookies)
	}
	post := func(addr, path string, form url.Values, cookies ...*http.Cookie) reply {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "http://"+addr)
		return do(req, cookies)
	}
	csrf := regexp.MustCompile(`name="_csrf" value="([^"]+)"`)
	cookie := func(r reply, name string) *http.Cookie {
		for _, c := range r.cookies {
			if c.Name == name && c.Value != "" {
				return c
			}
		}
		t.Fatalf("%s: no %s cookie (status %d)", r.what, name, r.status)
		return nil
	}
	login := get(first, "/ui/login")
	m := csrf.FindStringSubmatch(login.page)
	if m == nil {
		t.Fatalf("console sign-in page: %d", login.status)
	}
	signed := post(first, "/ui/login", url.Values{"_csrf": {m[1]}}, cookie(login, "hub_login"))
	session := cookie(signed, "hub_session")
	endpoints := get(other, "/ui/endpoints", session)
	if endpoints.status != http.StatusOK {
		t.Fatalf("a session opened on %s, used on %s: %d (want 200)", first, other, endpoints.status)
	}
	m = csrf.FindStringSubmatch(endpoints.page)
	if m == nil {
		t.Fatal("the endpoints page has no sign-out form")
	}
	if r := post(other, "/ui/logout", url.Values{"_csrf": {m[1]}}, session); r.status != http.StatusSeeOther {
		t.Fatalf("sign out on %s: %d", other, r.status)
	}
	if r := get(first, "/ui/endpoints", session); r.status != http.StatusSeeOther {
		t.Fatalf("the session signed out on %s still opens %s: %d", other, first, r.status)
	}
	t.Logf("console: signed in on %s, used and signed out on %s", first, other)
}

// registerEndpoint creates a webhook endpoint through one replica's admin API (the
// endpoint lives in the shared ledger) and returns its secret.
func registerEndpoint(t testing.TB, adminAddr, url string) string {
	t.Helper()
	status, body, err := postJSONType("http://"+adminAddr+"/endpoints", "application/json",
		[]byte(`{"url":"`+url+`","types":["identity.#"]}`))
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %v %s", status, err, body)
	}
	var ep struct{ ID, Secret string }
	if err := json.Unmarshal(body, &ep); err != nil || ep.Secret == "" {
		t.Fatalf("endpoint body %s: %v", body, err)
	}
	return ep.Secret
}

func postJSON(url string, body []byte) (int, []byte, error) {
	return postJSONType(url, "application/cloudevents+json", body)
}

func postJSONType(url, contentType string, body []byte) (int, []byte, error) {
	resp, err := http.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, nil
}

// erasedEvent is a valid identity.user.erased event in structured mode.
func erasedEvent(id string) []byte {
	return []byte(`{"specversion":"1.0","id":"` + id + `","source":"/ha","type":"identity.user.erased","subject":"u1","tenantid":"acme",` +
		`"datacontenttype":"application/json","data":{"erasure_id":"era_` + id + `","user_id":"u1"}}`)
}
