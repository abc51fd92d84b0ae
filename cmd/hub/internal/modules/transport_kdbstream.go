package modules

import (
	"context"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/cmd/hub/internal/store"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
)

func init() { registry.Register(new(KDBTransport)) }

// KDBTransport appends events to kdbstream streams, the SQL stream engine with Redis
// Streams semantics (transport.kdbstream). Without url it uses the config's store (the
// same SQLite file or PostgreSQL database as the ledger).
type KDBTransport struct {
	// URL is kdbstream:///path.db, sqlite://path.db or postgres://...; default: the store.
	URL              string `yaml:"url"`
	kdbstream.Config `yaml:",inline"`

	openStream
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
	return needDatabase(m.URL, pc)
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
	cfg.Naming = streams.DefaultNaming(cfg.Naming, cfg.Service)
	return cfg.Validate()
}

// Open opens the transport on the URL's own engine (closed with the transport), or on
// the store's engine (closed by the store after every module).
func (m *KDBTransport) Open(ctx context.Context, rt *registry.Runtime) (hub.Transport, error) {
	cfg := m.Config
	cfg.Logger, cfg.Metrics = rt.Logger, rt.StreamMetrics
	var t *kdbstream.Transport
	var err error
	if m.URL != "" {
		t, err = kdbstream.OpenWith(ctx, m.URL, cfg)
	} else if eng, kerr := rt.KDB(ctx); kerr != nil {
		err = kerr
	} else if t, err = kdbstream.New(eng, cfg); err == nil {
		// On the ledger's connection the outbox writes the entries in its own
		// transaction (outbox.TxSender) rather than relaying rows.
		t.ShareLedger(rt.Store.SharedLedger())
	}
	if err != nil {
		return nil, err
	}
	m.openStream = openStream{dlq: ops.DLQ{KDB: t.DLQ()}, status: t.Status}
	return t, nil
}

// needDatabase is the kdbstream modules' check: a url, or a store to default to.
func needDatabase(url string, pc *registry.ProvisionContext) error {
	if url == "" && !pc.Store.Configured() {
		return registry.Field("url", "required without a store (%v)", store.ErrNone)
	}
	return nil
}

var (
	_ registry.TransportModule = (*KDBTransport)(nil)
	_ registry.Provisioner     = (*KDBTransport)(nil)
	_ registry.Validator       = (*KDBTransport)(nil)
	_ ops.DLQProvider          = (*KDBTransport)(nil)
	_ ops.StreamStatuser       = (*KDBTransport)(nil)
)
