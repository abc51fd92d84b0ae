// Package ops is the contract between the admin API and the modules: the operations a
// module offers, as small interfaces found by type assertion. Every one hands over a
// library's own typed value (a *webhook.Transport, a *redisstream.DLQ, a
// streams.StreamStatus): the admin API calls the library and encodes what it returns,
// so the binary adds no operation the libraries lack, and a console can call the same
// functions.
package ops

import (
	"context"

	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/rabbitmq"
	"github.com/koder/eventhub/transports/redisstream"
	"github.com/koder/eventhub/transports/webhook"
)

// StreamStatuser is implemented by the stream modules (redisstream, kdbstream) for
// GET /transports: the stream's length and its groups' pending counts and lag. The
// status is nil while the module is not open or has no single stream.
type StreamStatuser interface {
	StreamStatus(ctx context.Context) (*streams.StreamStatus, error)
}

// BusStatus is the state of transport.bus (R9): which bus it resolved to, and that
// bus's stream.
type BusStatus struct {
	Bus    string                `json:"bus"`
	Stream *streams.StreamStatus `json:"stream"`
}

// BusStatuser is implemented by transport.bus.
type BusStatuser interface {
	BusStatus(ctx context.Context) (BusStatus, error)
}

// DLQ is a module's dead-letter store (W3): one of the libraries' kinds is set, or
// none while the module is not open.
type DLQ struct {
	Redis *redisstream.DLQ
	KDB   *kdbstream.DLQ
	// Rabbit is the consumer group's configuration: rabbitmq.OpenDLQ opens its DLQ per
	// operation, because reading an AMQP queue holds the messages until the channel
	// closes.
	Rabbit *rabbitmq.Config
}

// DLQProvider is implemented by modules that have a DLQ (stream transports and
// sources).
type DLQProvider interface {
	DLQ() DLQ
}

// WebhookProvider is implemented by the webhook transport module: endpoints,
// deliveries and breakers are the library's. Webhook is nil until the module is open.
type WebhookProvider interface {
	Webhook() *webhook.Transport
}

// The stream libraries' DLQs offer the same operations (W3), so the admin API serves
// both with one generic handler.
var (
	_ streams.DLQ[redisstream.DeadLetter] = (*redisstream.DLQ)(nil)
	_ streams.DLQ[kdbstream.DeadLetter]   = (*kdbstream.DLQ)(nil)
)
