package modules

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// The Redis and kdbstream sources share their consumer configuration (the R4 loop is one
// piece of code, internal/streams), so they share its checks and defaults here too.

// provisionStreamSource fills defaults that depend on the section or the host, so lint
// validates the configuration the consumer will run with.
func provisionStreamSource(cc *streams.ConsumerConfig) {
	if cc.DefaultSource == "" {
		// An entry written by hand as in seed 000 has no source; CloudEvents needs one,
		// and the stream it came from is the honest answer.
		cc.DefaultSource = cc.Stream
	}
	if cc.Consumer == "" {
		// What the libraries' NewConsumer defaults to; without a host name the consumer
		// stays unnamed and Validate reports it.
		cc.Consumer, _ = os.Hostname()
	}
}

// validateStreamSource checks the stream and group names (R1, R3) and every consumer
// option (streams.ConsumerConfig.Validate reports all of its problems, each naming its field,
// placed here at the field's key), without opening anything.
func validateStreamSource(cc streams.ConsumerConfig) error {
	var errs []error
	if cc.Stream != "" {
		if err := streams.ValidateStream(cc.Stream); err != nil {
			errs = append(errs, registry.Field("stream", "%v", err))
		}
	}
	if cc.Group != "" {
		if err := streams.ValidateGroup(cc.Group); err != nil {
			errs = append(errs, registry.Field("group", "%v", err))
		}
	}
	for _, err := range config.SplitJoined(cc.Validate()) {
		var fe *streams.ConfigError
		if errors.As(err, &fe) {
			err = &registry.FieldError{Key: consumerKey(fe.Field), Err: err}
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// consumerKey is the YAML key of a consumer config field ("claim_min_idle").
func consumerKey(field string) string {
	f, _ := reflect.TypeFor[streams.ConsumerConfig]().FieldByName(field)
	key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return key
}

// streamSourceConfig is the consumer configuration a started source runs with.
func streamSourceConfig(cc streams.ConsumerConfig, rt *registry.Runtime) streams.ConsumerConfig {
	cc.Logger, cc.Metrics = rt.Logger, rt.StreamMetrics
	if rt.Schemas != nil {
		cc.Versions = rt.Schemas
	}
	return cc
}

// sourceDLQStream is the group's dead-letter stream.
func sourceDLQStream(cc streams.ConsumerConfig) string {
	if cc.DLQStream != "" {
		return cc.DLQStream
	}
	return streams.DLQStreamFor(cc.Stream)
}

// publishHandler is the handler every queue and stream source runs: publish the event
// into the hub. An error (hub closed, outbox down) leaves the message for redelivery.
func publishHandler(rt *registry.Runtime) func(ctx context.Context, ev *cloudevent.Event) error {
	// A consumer span per event, child of the publisher's span the event carries, so a
	// trace runs on from the producing service (or replica) through this source.
	return hub.TracedHandler("source", func(ctx context.Context, ev *cloudevent.Event) error {
		return rt.Publisher.Publish(ctx, ev)
	}, nil)
}

// openStream is what a stream transport module offers the admin API once open (the
// library's DLQ and status of its stream); both stream transports embed it.
type openStream struct {
	dlq    ops.DLQ
	status func(context.Context) (*streams.StreamStatus, error)
}

// DLQ is the dead-letter stream of the transport's stream (category naming: events.dlq).
func (o *openStream) DLQ() ops.DLQ { return o.dlq }

// StreamStatus is the library's status of the transport's stream.
func (o *openStream) StreamStatus(ctx context.Context) (*streams.StreamStatus, error) {
	if o.status == nil {
		return nil, nil // not open
	}
	return o.status(ctx)
}
