package modules

import (
	"context"
	"errors"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

func init() { registry.Register(new(KDBSource)) }

// KDBSource reads a kdbstream stream as a consumer group and publishes every event into
// the hub (source.kdbstream), with the Redis source's loop (ack after Publish, claim,
// DLQ). Without url it uses the config's store.
type KDBSource struct {
	// URL is kdbstream:///path.db, sqlite://path.db or postgres://...; default: the store.
	URL string `yaml:"url"`
	// Idempotency skips events this group already processed (R5). Default true.
	Idempotency *bool `yaml:"idempotency"`

	streams.ConsumerConfig `yaml:",inline"`

	eng   *engine.Engine
	owned bool
	c     *kdbstream.Consumer
}

// HubModule registers source.kdbstream.
func (*KDBSource) HubModule() registry.Info {
	return registry.Info{ID: "source.kdbstream", New: func() registry.Module { return new(KDBSource) },
		Doc: "kdbstream consumer group: each event is published into the hub, acked after Publish"}
}

// Provision checks that there is a database.
func (m *KDBSource) Provision(pc *registry.ProvisionContext) error {
	provisionStreamSource(&m.ConsumerConfig)
	return needDatabase(m.URL, pc)
}

// Validate checks the URL, stream and group (R3) without opening anything.
func (m *KDBSource) Validate() error {
	var errs []error
	if m.URL != "" {
		if _, _, err := kdbstream.ParseURL(m.URL, kdbstream.Config{}); err != nil {
			errs = append(errs, registry.Field("url", "%v", err))
		}
	}
	return errors.Join(append(errs, validateStreamSource(m.ConsumerConfig))...)
}

// Start opens the engine and consumes in the background.
func (m *KDBSource) Start(ctx context.Context, rt *registry.Runtime) error {
	var err error
	if m.URL != "" {
		m.eng, err = kdbstream.OpenEngine(ctx, m.URL)
		m.owned = err == nil
	} else {
		m.eng, err = rt.KDB(ctx)
	}
	if err != nil {
		return err
	}
	cfg := streamSourceConfig(m.ConsumerConfig, rt)
	if m.Idempotency == nil || *m.Idempotency {
		st, err := kdbstream.NewIdempotencyStore(ctx, m.eng, "")
		if err != nil {
			return m.fail(err)
		}
		cfg.Idempotency = st
	}
	c, err := kdbstream.NewConsumer(m.eng, cfg)
	if err == nil {
		err = c.Start(context.WithoutCancel(ctx), publishHandler(rt))
	}
	if err != nil {
		return m.fail(err)
	}
	m.c = c
	return nil
}

func (m *KDBSource) fail(err error) error {
	if m.owned {
		m.eng.Close()
	}
	return err
}

// Close stops reading and drains handlers.
func (m *KDBSource) Close(ctx context.Context) error {
	if m.c == nil {
		return nil
	}
	err := m.c.Close()
	if m.owned {
		err = errors.Join(err, m.eng.Close())
	}
	return err
}

// DLQ operates the group's dead-letter stream.
func (m *KDBSource) DLQ() ops.DLQ {
	if m.eng == nil {
		return ops.DLQ{}
	}
	return ops.DLQ{KDB: kdbstream.NewDLQ(m.eng, sourceDLQStream(m.ConsumerConfig))}
}

// StreamStatus reports the stream with the group's progress.
func (m *KDBSource) StreamStatus(ctx context.Context) (*streams.StreamStatus, error) {
	if m.eng == nil {
		return nil, nil
	}
	st, err := kdbstream.ReadStatus(ctx, m.eng, m.Stream)
	return &st, err
}

var (
	_ registry.SourceModule = (*KDBSource)(nil)
	_ registry.Provisioner  = (*KDBSource)(nil)
	_ registry.Validator    = (*KDBSource)(nil)
	_ ops.DLQProvider       = (*KDBSource)(nil)
	_ ops.StreamStatuser    = (*KDBSource)(nil)
)
