package natsjs

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/koder/eventhub/hub"
)

// connect opens a connection the transport or consumer owns. Reconnection is the
// client's (MaxReconnects -1: for ever); ReconnectBufSize -1 makes a publish during an
// outage fail at once (Unavailable) instead of being buffered, since the hub owns
// retries.
func connect(ctx context.Context, cfg *Config, role string, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.DrainTimeout(cfg.DrainTimeout),
		nats.Name("eventhub-" + cfg.Name + "-" + role),
		nats.Timeout(cfg.ConnectTimeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(cfg.ReconnectWait),
		nats.ReconnectBufSize(-1),
		nats.RetryOnFailedConnect(cfg.ConnectInBackground),
	}
	logger := cfg.Logger
	opts = append(opts,
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			logger.Warn("nats disconnected", "role", role, "error", fmt.Sprint(err))
		}),
		nats.ReconnectHandler(func(*nats.Conn) { logger.Info("nats reconnected", "role", role) }),
	)
	opts = append(opts, extra...)
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := nats.Connect(cfg.URL, opts...)
		done <- result{nc, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, hub.Wrap(errorCode(r.err), fmt.Errorf("natsjs: connect %s: %w", Redact(cfg.URL), r.err))
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// ensureStream creates a stream whose subjects are subjects when it is missing and
// leaves an existing one alone (its configuration is the operator's).
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg *Config, name string, subjects []string) error {
	_, err := js.Stream(ctx, name)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return hub.Wrap(errorCode(err), fmt.Errorf("natsjs: stream %s: %w", name, err))
	}
	sc := jetstream.StreamConfig{
		Name:       name,
		Subjects:   subjects,
		Storage:    jetstream.FileStorage,
		Retention:  jetstream.LimitsPolicy,
		Duplicates: cfg.Duplicates,
	}
	if cfg.MaxAge > 0 {
		sc.MaxAge = cfg.MaxAge
	}
	if _, err := js.CreateStream(ctx, sc); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return hub.Wrap(errorCode(err), fmt.Errorf("natsjs: create stream %s: %w", name, err))
	}
	return nil
}

// Redact returns rawURL with any password replaced by "xxxxx", for errors and logs.
func Redact(rawURL string) string {
	out := ""
	for i, part := range splitURLs(rawURL) {
		if i > 0 {
			out += ","
		}
		out += redactOne(part)
	}
	return out
}
