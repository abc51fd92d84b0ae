package kdbstream

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// rawEntries reads stream's entries as flat field maps, in the engine's own order: what
// any reader of the stream gets, without the hub's decoder.
func rawEntries(t *testing.T, eng *engine.Engine, stream string) []map[string]string {
	t.Helper()
	es, err := eng.XRange(testenv.Context(t, 10*time.Second), stream, "-", "+", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]string, len(es))
	for i, e := range es {
		m := map[string]string{}
		for j := 0; j+1 < len(e.Fields); j += 2 {
			m[e.Fields[j]] = e.Fields[j+1]
		}
		out[i] = m
	}
	return out
}

// TestR2_Seed000PeerAcceptsEveryEntry: every entry kdbstream writes for a random sample
// of events (many without actor, subject, time or data), through the hub and directly,
// passes a seed 000 consumer's checks (streamtest.Seed000Problems), on both databases.
func TestR2_Seed000PeerAcceptsEveryEntry(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			eng := openEngine(t, db)
			ctx := testenv.Context(t, time.Minute)
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
			stream := "peer.r2"
			tr, err := New(eng, Config{Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			h, err := hub.New(hub.WithLogger(testenv.Logger(t)))
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Forward("#", tr, hub.WithDefaultSubject("unspecified")); err != nil {
				t.Fatal(err)
			}
			typ := func(int) string { return "identity.user.erased" }
			for _, ev := range streamtest.RandomEvents(rng, 60, typ) {
				if err := h.Publish(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			direct, err := New(eng, Config{Stream: stream, DefaultSubject: "unspecified"})
			if err != nil {
				t.Fatal(err)
			}
			if err := direct.Send(ctx, streamtest.RandomEvents(rng, 60, typ)); err != nil {
				t.Fatal(err)
			}
			entries := rawEntries(t, eng, stream)
			if len(entries) != 120 {
				t.Fatalf("%d entries, want 120", len(entries))
			}
			for i, e := range entries {
				if problems := streamtest.Seed000Problems(e); len(problems) > 0 {
					t.Errorf("the seed 000 peer refuses entry %d %v: %v", i, e, problems)
				}
			}
		})
	}
}

// TestE1_Seed001PeerReadsCategoryStreams: with encoding seed001 and per-category naming,
// every entry passes a seed 001 consumer's checks (streamtest.Seed001Problems).
func TestE1_Seed001PeerReadsCategoryStreams(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			eng := openEngine(t, db)
			ctx := testenv.Context(t, time.Minute)
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
			category := "c" + strings.ToLower(ulid.Make().String())
			tr, err := New(eng, Config{Naming: streams.NamingCategory, Encoding: streams.EncodingSeed001})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Send(ctx, streamtest.RandomEvents(rng, 60, func(int) string { return category + ".created" })); err != nil {
				t.Fatal(err)
			}
			entries := rawEntries(t, eng, streams.CategoryPrefix+category)
			if len(entries) != 60 {
				t.Fatalf("%d entries in events.%s, want 60", len(entries), category)
			}
			for i, e := range entries {
				if problems := streamtest.Seed001Problems(e, 1); len(problems) > 0 {
					t.Errorf("the seed 001 peer refuses entry %d %v: %v", i, e, problems)
				}
			}
		})
	}
}
