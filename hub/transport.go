package hub

import (
	"context"

	"github.com/koder/eventhub/cloudevent"
)

// Transport is the driver every destination implements; the hub is the portable layer
// above it (validation, the 3 attempts, metrics, tracing, the failure event).
//
// Send delivers a batch and returns once every event in it is accepted durably by the
// destination (XADD replied, publisher confirm received, delivery job inserted), or an
// error classified with a code (see Code). It is called concurrently. It must not retry
// on its own: retry policy belongs to the hub (direct mode) or the outbox relay. It must
// not retain or modify the batch or its events after returning.
//
// Close releases what the transport opened itself (it does not close clients the caller
// passed in). It is idempotent; Send after Close fails with FailedPrecondition.
type Transport interface {
	Send(ctx context.Context, batch []*cloudevent.Event) error
	Close() error
}

// Handler processes one event on the consuming side. A nil error acknowledges the event;
// any other error leaves it for redelivery (and, past the retry limit, the dead-letter).
type Handler func(ctx context.Context, ev *cloudevent.Event) error

// Consumer is the receiving half every stream transport offers, so that an application
// switches buses (KODER_EVENT_BUS) without code changes (R9).
//
// Start returns once consumption runs in the background. Close stops fetching, waits for
// in-flight handlers up to the consumer's drain timeout (work not finished stays pending
// for redelivery: nothing is lost), is idempotent and safe before Start.
type Consumer interface {
	Start(ctx context.Context, h Handler) error
	Close() error
}

// Named is optionally implemented by transports to label metrics, logs and failure events.
type Named interface{ Name() string }

// HealthChecker is optionally implemented by transports that can report reachability.
type HealthChecker interface {
	Health(ctx context.Context) error
}
