package redisstream

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/schema"
	"github.com/koder/eventhub/streams"
)

// peerRead is a consumer written from a seed's text with plain go-redis: R4.1's
// XGROUP CREATE ... $ MKSTREAM at boot, then R4.2's XREADGROUP COUNT 100 BLOCK 5000
// and an XACK per accepted entry. check returns why it refuses an entry. It reads
// until want entries arrived and returns the refusals, keyed by entry id.
type peerRead struct {
	client *redis.Client
	stream string
	group  string
}

func newPeer(t *testing.T, c *redis.Client, stream string) *peerRead {
	t.Helper()
	p := &peerRead{client: c, stream: stream, group: "peer-" + strings.ToLower(ulid.Make().String())}
	if err := c.XGroupCreateMkStream(context.Background(), stream, p.group, "$").Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *peerRead) read(t *testing.T, want int, check func(map[string]string) []string) (entries []map[string]string, refused map[string][]string) {
	t.Helper()
	ctx := testenv.Context(t, time.Minute)
	refused = map[string][]string{}
	for len(entries) < want {
		res, err := p.client.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: p.group, Consumer: "peer-1", Streams: []string{p.stream, ">"}, Count: 100, Block: 5 * time.Second,
		}).Result()
		if errors.Is(err, redis.Nil) {
			t.Fatalf("the peer read %d entries of %d, then nothing for 5s", len(entries), want)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res[0].Messages {
			values := map[string]string{}
			for k, v := range m.Values {
				s, ok := v.(string)
				if !ok {
					t.Fatalf("entry %s field %s is %T, not a string", m.ID, k, v)
				}
				values[k] = s
			}
			entries = append(entries, values)
			if problems := check(values); len(problems) > 0 {
				refused[m.ID] = problems
				continue // a peer leaves it pending for its DLQ
			}
			p.client.XAck(ctx, p.stream, p.group, m.ID)
		}
	}
	return entries, refused
}

// TestR2_Seed000PeerAcceptsEveryEntry runs a consumer written from seed 000 alone (every
// R2 field present and non-empty, evt_<ULID>, ISO 8601 UTC, the actor forms, JSON data)
// over a random sample of events, many without actor, subject, time or data, written
// both by the hub (a route with a default subject) and by the transport called
// directly (its DefaultSubject): it accepts every entry.
func TestR2_Seed000PeerAcceptsEveryEntry(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := testenv.Context(t, time.Minute)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	stream := testenv.Name(t)
	t.Cleanup(func() { c.Del(context.Background(), stream) })
	peer := newPeer(t, c, stream)

	viaHub, err := New(c, Config{Stream: stream, Name: "r2"})
	if err != nil {
		t.Fatal(err)
	}
	defer viaHub.Close()
	h, err := hub.New(hub.WithLogger(testenv.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Forward("#", viaHub, hub.WithDefaultSubject("unspecified")); err != nil {
		t.Fatal(err)
	}
	typ := func(int) string { return "identity.user.erased" }
	hubEvents := streamtest.RandomEvents(rng, 100, typ)
	for _, ev := range hubEvents {
		if err := h.Publish(ctx, ev); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	direct, err := New(c, Config{Stream: stream, DefaultSubject: "unspecified", DefaultActor: "system"})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	directEvents := streamtest.RandomEvents(rng, 100, typ)
	if err := direct.Send(ctx, directEvents); err != nil {
		t.Fatal(err)
	}

	entries, refused := peer.read(t, 200, streamtest.Seed000Problems)
	for id, problems := range refused {
		t.Errorf("the seed 000 peer refuses entry %s: %v", id, problems)
	}
	defaulted := map[string]int{}
	for _, e := range entries {
		for f := range strings.SplitSeq(e[cloudevent.FieldDefaulted], ",") {
			defaulted[f]++
		}
	}
	for _, f := range []string{"occurred_at", "subject_id", "actor", "data"} {
		if defaulted[f] == 0 {
			t.Errorf("no entry of the sample had %s defaulted: the sample does not cover it", f)
		}
	}
}

// TestE1_Seed001PeerReadsCategoryStreams: a hub transport with encoding seed001 and
// per-category naming writes events.<category>; a consumer written from seed 001 alone
// (its eight fields present and non-empty, ISO 8601 timestamps, semver with a known
// MAJOR, JSON data and metadata) reads every entry, and the correlation id the
// request set survives (E4).
func TestE1_Seed001PeerReadsCategoryStreams(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := testenv.Context(t, time.Minute)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	category := "c" + strings.ToLower(ulid.Make().String()) // a stream of this test's own
	stream := streams.CategoryPrefix + category
	t.Cleanup(func() { c.Del(context.Background(), stream) })
	peer := newPeer(t, c, stream)

	tr, err := New(c, Config{Naming: streams.NamingCategory, Encoding: streams.EncodingSeed001})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.RequiresSubject() {
		t.Fatal("the seed 001 encoding has no subject field, so no subject is required")
	}
	h, err := hub.New(hub.WithLogger(testenv.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Forward(category+".#", tr); err != nil {
		t.Fatal(err)
	}
	evs := streamtest.RandomEvents(rng, 50, func(int) string { return category + ".created" })
	rctx := hub.WithCorrelationID(ctx, "req_e1")
	for _, ev := range evs {
		ev.SetCorrelationID("")
		if err := h.Publish(rctx, ev); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	entries, refused := peer.read(t, len(evs), func(v map[string]string) []string { return streamtest.Seed001Problems(v, 1) })
	for id, problems := range refused {
		t.Errorf("the seed 001 peer refuses entry %s: %v", id, problems)
	}
	for _, e := range entries {
		if e["correlation_id"] != "req_e1" || e["event_type"] != category+".created" {
			t.Errorf("entry %v: want correlation_id req_e1, event_type %s.created", e, category)
		}
	}
}

// TestE1_Seed001DeadLettersToEventsDLQ: our consumer of a per-category stream in the
// seed 001 encoding handles a hand-written seed 001 entry and sends one of an unknown
// MAJOR version (the schema registry's gate, E5) to events.dlq (E6, E8).
func TestE1_Seed001DeadLettersToEventsDLQ(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := testenv.Context(t, time.Minute)
	stream := streams.CategoryPrefix + "c" + strings.ToLower(ulid.Make().String())
	t.Cleanup(func() { c.Del(context.Background(), stream) })
	cons, err := NewConsumer(c, streams.ConsumerConfig{
		Stream: stream, Group: testGroup(t), Consumer: "c1", Start: "0", Block: 100 * time.Millisecond,
		Encoding: streams.EncodingSeed001, DefaultTenant: "tenant-A", Versions: schema.Builtin(),
		Logger: testenv.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if dlq := cons.Config().DLQStream; dlq != streams.CategoryDLQ {
		t.Fatalf("DLQ stream %q, want %s", dlq, streams.CategoryDLQ)
	}
	got := make(chan *cloudevent.Event, 2)
	if err := cons.Start(ctx, func(_ context.Context, ev *cloudevent.Event) error { got <- ev; return nil }); err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	bad, good := cloudevent.NewID(), cloudevent.NewID()
	for _, e := range []struct{ id, version string }{{bad, "2.0.0"}, {good, "1.0.0"}} {
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{
			"event_id", e.id, "correlation_id", "req_abc123", "event_type", "user.created", "version", e.version,
			"timestamp", "2024-01-15T10:30:00.000Z", "source", "identity-platform",
			"data", `{"user_id":"u1","email":"user@acme.com","created_at":"2024-01-15T10:30:00Z"}`,
			"metadata", `{"ip":"192.168.1.1","user_agent":"Mozilla/5.0...","request_id":"uuid"}`,
		}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case ev := <-got:
		if ev.ID != good || ev.TenantID() != "tenant-A" || ev.CorrelationID() != "req_abc123" {
			t.Fatalf("handled %#v", ev)
		}
	case <-ctx.Done():
		t.Fatal("the 1.0.0 entry was not handled")
	}
	var dead []redis.XMessage
	testenv.WaitFor(t, 10*time.Second, "the 2.0.0 entry in events.dlq", func() bool {
		msgs, _ := c.XRange(ctx, streams.CategoryDLQ, "-", "+").Result()
		dead = dead[:0]
		for _, m := range msgs {
			if m.Values["event_id"] == bad {
				dead = append(dead, m)
			}
		}
		return len(dead) == 1
	})
	t.Cleanup(func() { c.XDel(context.Background(), streams.CategoryDLQ, dead[0].ID) }) // events.dlq is shared
	if r := dead[0].Values["dlq_reason"]; r != streams.ReasonUnknownVersion {
		t.Fatalf("dlq_reason %v, want %s", r, streams.ReasonUnknownVersion)
	}
}
