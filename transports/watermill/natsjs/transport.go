package natsjs

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ThreeDotsLabs/watermill"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	wm "github.com/koder/eventhub/transports/watermill"
)

// Transport publishes events to a JetStream stream through watermill-nats (JetStream
// mode) under the Watermill adapter: an event of type T goes to "<Subject>.T" as the
// CloudEvents NATS binding (Marshaler), with Nats-Msg-Id = its id, and Send returns once
// the stream acknowledged every event of the batch (one acknowledged publish after the
// other, as watermill-nats does). Errors are classified by this package's table
// (Unavailable during an outage, NotFound when no stream takes the subject).
//
// When the server was not reachable at New (ConnectInBackground), the stream is created
// by the first Send that finds the server up.
type Transport struct {
	*wm.Transport
	nc  *nats.Conn
	cfg Config

	streamMu    sync.Mutex
	streamReady atomic.Bool
	closed      atomic.Bool
}

// New validates cfg, connects, creates the stream when missing (CreateStream) and
// returns the transport. Close closes the connection it opened.
func New(ctx context.Context, cfg Config) (*Transport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	nc, err := connect(ctx, &cfg, "publisher")
	if err != nil {
		return nil, err
	}
	t, err := openTransport(ctx, nc, cfg)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return t, nil
}

func openTransport(ctx context.Context, nc *nats.Conn, cfg Config) (*Transport, error) {
	t := &Transport{nc: nc, cfg: cfg}
	t.streamReady.Store(!cfg.createStream())
	if nc.IsConnected() {
		if err := t.ensureStream(ctx); err != nil {
			return nil, err
		}
	}
	pub, err := wmnats.NewPublisherWithNatsConn(nc, wmnats.PublisherPublishConfig{
		Marshaler:         Marshaler{},
		SubjectCalculator: wmnats.DefaultSubjectCalculator,
		JetStream:         wmnats.JetStreamConfig{}, // JetStream mode; Nats-Msg-Id comes from Marshaler
	}, watermill.NopLogger{})
	if err != nil {
		return nil, hub.Wrap(errorCode(err), err)
	}
	prefix := cfg.Subject + "."
	tr, err := wm.NewTransport(pub, wm.Config{
		Mode: cfg.Mode, Name: cfg.Name,
		TopicFor:       func(ev *cloudevent.Event) (string, error) { return SubjectFor(prefix, ev.Type) },
		ErrorCode:      errorCode,
		ClosePublisher: true, // watermill-nats closes the connection with it
		Logger:         cfg.Logger, Metrics: cfg.Metrics,
	})
	if err != nil {
		return nil, err
	}
	t.Transport = tr
	return t, nil
}

// ensureStream creates the stream once, when CreateStream asks for it.
func (t *Transport) ensureStream(ctx context.Context) error {
	if t.streamReady.Load() {
		return nil
	}
	t.streamMu.Lock()
	defer t.streamMu.Unlock()
	if t.streamReady.Load() {
		return nil
	}
	js, err := jetstream.New(t.nc)
	if err != nil {
		return hub.Wrap(errorCode(err), err)
	}
	if err := ensureStream(ctx, js, &t.cfg, t.cfg.Stream, []string{t.cfg.Subject + ".>"}); err != nil {
		return err
	}
	t.streamReady.Store(true)
	return nil
}

// Send publishes the batch (see Transport), creating the stream first if New could not.
func (t *Transport) Send(ctx context.Context, batch []*cloudevent.Event) error {
	if !t.closed.Load() && !t.streamReady.Load() && len(batch) > 0 {
		if !t.nc.IsConnected() {
			return hub.Errorf(hub.Unavailable, "natsjs: not connected (%s)", t.nc.Status())
		}
		if err := t.ensureStream(ctx); err != nil {
			return err
		}
	}
	return t.Transport.Send(ctx, batch)
}

// Close closes the publisher and the connection. Idempotent.
func (t *Transport) Close() error {
	t.closed.Store(true)
	return t.Transport.Close()
}

// SubjectFor returns prefix + typ ("events." + "identity.user.created"), or an
// InvalidArgument error when typ cannot be subject tokens (an empty word, a blank, a
// wildcard).
func SubjectFor(prefix, typ string) (string, error) {
	for tok := range strings.SplitSeq(typ, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n") {
			return "", hub.Errorf(hub.InvalidArgument, "natsjs: type %q cannot be a NATS subject (dot-separated non-empty words without blanks or wildcards)", typ)
		}
	}
	return prefix + typ, nil
}

// Health reports whether the connection is up.
func (t *Transport) Health(context.Context) error {
	if !t.nc.IsConnected() {
		return hub.Errorf(hub.Unavailable, "natsjs: %s", t.nc.Status())
	}
	return nil
}

// Conn returns the NATS connection, for tools sharing it.
func (t *Transport) Conn() *nats.Conn { return t.nc }

var (
	_ hub.Transport     = (*Transport)(nil)
	_ hub.Named         = (*Transport)(nil)
	_ hub.HealthChecker = (*Transport)(nil)
)
