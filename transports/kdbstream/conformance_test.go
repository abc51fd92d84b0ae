package kdbstream

import (
	"context"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// conformanceSubject is the harness transports' DefaultSubject.
const conformanceSubject = "transporttest-subject"

func TestConformance(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			transporttest.Run(t, func(t *testing.T) transporttest.Harness { return newConfHarness(t, db) }, transporttest.Features{
				Ordered:        true, // one stream, Concurrency 1: id order
				Persistent:     true, // groups start at "0": entries written before the consumer are read
				ConsumerGroups: true, // Redis consumer-group semantics
				Redelivery:     true, // claimed after ClaimMinIdle
				MaxBatch:       0,    // no limit: one transaction per Send
				Normalize:      nil,  // lossless R2 fields
			})
		})
	}
}

// confHarness gives each check its own database and stream.
type confHarness struct {
	t      testing.TB
	driver string
	eng    *engine.Engine
	stream string
	tr     *Transport
}

func newConfHarness(t testing.TB, driver string) *confHarness {
	h := &confHarness{t: t, driver: driver, eng: openEngine(t, driver), stream: "conf." + testenv.Name(t)}
	// The suite sends events without a subject (MinimalEvent, BinaryEvent): R2 needs
	// one, so the harness configures the default a deployment would.
	tr, err := New(h.eng, Config{Stream: h.stream, DefaultSubject: conformanceSubject})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	h.tr = tr
	return h
}

func (h *confHarness) Transport() hub.Transport { return h.tr }

func (h *confHarness) Consume(group string, handler hub.Handler) func() {
	if group == "" {
		group = "conf-default"
	} else {
		group = "conf-" + group
	}
	c, err := NewConsumer(h.eng, streams.ConsumerConfig{
		Stream: h.stream, Group: group, Consumer: "c-" + testenv.Name(h.t), Start: "0",
		Block: time.Second, ClaimMinIdle: time.Second, ClaimInterval: 200 * time.Millisecond,
		MaxDeliveries: 100, DrainTimeout: 5 * time.Second,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := c.Start(context.Background(), handler); err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	stop := func() { _ = c.Close() }
	h.t.Cleanup(stop)
	return stop
}

// Unreachable aims at a PostgreSQL port nothing listens on (SQLite harnesses too: a
// file database has no "down" state; a missing directory would be a config error).
func (h *confHarness) Unreachable() hub.Transport {
	eng, err := engine.Open(context.Background(), engine.Config{
		Driver: engine.DriverPostgres, DSN: "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", Lazy: true,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	tr, err := New(eng, Config{Stream: h.stream, DefaultSubject: conformanceSubject})
	if err != nil {
		h.t.Fatal(err)
	}
	tr.owned = true
	h.t.Cleanup(func() { _ = tr.Close() })
	return tr
}
