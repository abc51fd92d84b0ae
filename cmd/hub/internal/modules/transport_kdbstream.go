package modules

import (
	"context"
	"errors"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/cmd/hub/internal/shared"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

func init() { registry.Register(new(KDBTransport)) }

// KDBTransport appends events to kdbstream streams, the SQL stream engine with Redis
// Streams semantics (transport.kdbstream). Without url it uses the config's store (the
// same SQLite file or PostgreSQL database as the ledger).
type KDBTransport struct {
	// URL is kdbstream:///path.db, sqlite://path.db or postgres://...; default: the store.
	URL              string `yaml:"url"`
	kdbstream.Config `yaml:",inline"`

	eng   *engine.Engine
	owned bool
}

// HubModule registers transport.kdbstream.
func (*KDBTransport) HubModule() registry.Info {
	return registry.Info{ID: "transport.kdbstream", New: func() registry.Module { return new(KDBTransport) },
		Doc: "kdbstream: Redis Streams semantics on SQLite or PostgreSQL (url, or the config's store)"}
}

// Provision names metrics after the section and checks that there is a database.
func (m *KDBTransport) Provision(pc *registry.ProvisionContext) error {
	if m.Name == "" {
		m.Name = pc.Name
	}
	if m.URL == "" && !shared.HasStore(pc.Store) {
		return registry.Field("url", "required without a store (%v)", shared.ErrNoStore)
	}
	return nil
}

// Validate checks the URL and the naming without opening anything.
func (m *KDBTransport) Validate() error {
	cfg := m.Config
	if m.URL != "" {
		_, c, err := kdbstream.ParseURL(m.URL, cfg)
		if err != nil {
			return registry.Field("url", "%v", err)
		}
		cfg = c
	}
	if cfg.Naming == "" && cfg.Service != "" {
		cfg.Naming = streams.NamingService
	}
	return cfg.Validate()
}

// Open opens the engine (shared on the store, or the URL's own) and the transport.
func (m *KDBTransport) Open(ctx context.Context, rt *registry.Runtime) (hub.Transport, error) {
	cfg := m.Config
	cfg.Logger, cfg.Metrics = rt.Logger, rt.StreamMets
	if m.URL != "" {
		t, err := kdbstream.OpenWith(ctx, m.URL, cfg)
		if err != nil {
			return nil, err
		}
		m.eng, m.owned = t.Engine(), true
		return t, nil
	}
	eng, err := shared.KDB(ctx, rt)
	if err != nil {
		return nil, err
	}
	m.eng = eng
	return kdbstream.New(eng, cfg)
}

// stream is the fixed stream this transport writes, when it has one.
func (m *KDBTransport) stream() string { return m.selection().FixedStream() }

func (m *KDBTransport) selection() streams.Selection {
	return streams.Selection{Service: m.Service, Naming: m.Naming, Stream: m.Stream}
}

// DLQ operates the dead-letter stream of the transport's stream.
func (m *KDBTransport) DLQ() ops.DLQ {
	if m.eng == nil {
		return nil
	}
	return kdbDLQ{m.eng, m.selection().DLQStream()}
}

// Status reports the stream's length and groups.
func (m *KDBTransport) Status(ctx context.Context) (any, error) {
	if m.eng == nil || m.stream() == "" {
		return nil, nil
	}
	return kdbStatus(ctx, m.eng, m.stream())
}

func kdbStatus(ctx context.Context, eng *engine.Engine, stream string) (any, error) {
	n, err := eng.XLen(ctx, stream)
	if err != nil {
		return nil, err
	}
	groups, err := eng.XInfoGroups(ctx, stream)
	if err != nil && !errors.Is(err, hub.ErrNotFound) {
		groups = nil
	}
	type group struct {
		Name            string `json:"name"`
		Consumers       int64  `json:"consumers"`
		Pending         int64  `json:"pending"`
		Lag             int64  `json:"lag"`
		LastDeliveredID string `json:"last_delivered_id"`
	}
	out := struct {
		Stream string  `json:"stream"`
		Length int64   `json:"length"`
		Groups []group `json:"groups"`
	}{Stream: stream, Length: n}
	for _, g := range groups {
		out.Groups = append(out.Groups, group{g.Name, g.Consumers, g.Pending, g.Lag, g.LastDeliveredID.String()})
	}
	return out, nil
}

var (
	_ registry.TransportModule = (*KDBTransport)(nil)
	_ registry.Provisioner     = (*KDBTransport)(nil)
	_ registry.Validator       = (*KDBTransport)(nil)
	_ ops.DLQProvider          = (*KDBTransport)(nil)
	_ ops.Statuser             = (*KDBTransport)(nil)
)
