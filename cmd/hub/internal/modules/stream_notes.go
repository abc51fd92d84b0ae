package modules

import (
	"fmt"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/redisstream"
)

// streamNotes says what a stream transport does by default that its section need not
// spell out: the retention of its streams (R6 for R1 streams, E8 for per-category
// ones) and the entry format with its defaults (R2 never has an empty field).
func streamNotes(sel streams.Selection, ret streams.Retention, w streams.Wire) []string {
	notes := []string{"retention: " + ret.Describe(sel)}
	if w.EncodingName() == streams.EncodingSeed001 {
		return append(notes, "entries: seed001 (event_id, correlation_id, event_type, version, timestamp, source, data, metadata)")
	}
	actor := w.DefaultActor
	if actor == "" {
		actor = "system"
	}
	subject := "events without a subject are refused unless their route sets default_subject"
	if w.DefaultSubject != "" {
		subject = fmt.Sprintf("subject_id %q for events without a subject", w.DefaultSubject)
	}
	return append(notes, fmt.Sprintf("entries: r2 (seed 000 fields, none empty); actor %q for events without one; %s", actor, subject))
}

// Notes reports the transport's retention and entry format (`hub lint`).
func (m *RedisTransport) Notes() []string {
	cfg := m.Config
	if m.URL != "" {
		if _, c, err := redisstream.ParseClientURL(m.URL, cfg); err == nil {
			cfg = c
		}
	}
	return streamNotes(
		streams.Selection{Service: cfg.Service, Naming: streams.DefaultNaming(cfg.Naming, cfg.Service), Stream: cfg.Stream},
		streams.Retention{MaxLen: cfg.MaxLen, MinIDAge: cfg.MinIDAge},
		streams.Wire{Encoding: cfg.Encoding, DefaultActor: cfg.DefaultActor, DefaultSubject: cfg.DefaultSubject})
}

// Notes reports the transport's retention and entry format (`hub lint`).
func (m *KDBTransport) Notes() []string {
	cfg := m.Config
	if m.URL != "" {
		if _, c, err := kdbstream.ParseURL(m.URL, cfg); err == nil {
			cfg = c
		}
	}
	return streamNotes(
		streams.Selection{Service: cfg.Service, Naming: streams.DefaultNaming(cfg.Naming, cfg.Service), Stream: cfg.Stream},
		streams.Retention{MaxLen: cfg.MaxLen, MinIDAge: cfg.MinIDAge},
		streams.Wire{Encoding: cfg.Encoding, DefaultActor: cfg.DefaultActor, DefaultSubject: cfg.DefaultSubject})
}

// Notes are the resolved transport's, with the bus named.
func (m *BusTransport) Notes() []string {
	n, ok := m.inner.(registry.Noter)
	if !ok {
		return nil
	}
	out := []string{"bus: " + m.Bus}
	return append(out, n.Notes()...)
}

var (
	_ registry.Noter = (*RedisTransport)(nil)
	_ registry.Noter = (*KDBTransport)(nil)
	_ registry.Noter = (*BusTransport)(nil)
)
