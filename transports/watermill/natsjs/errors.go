package natsjs

import (
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/watermill"
)

// errorCode is the table from nats.go's errors to hub codes, the adapter's ErrorCoder
// for this binding. Sources: nats.go's nats.go and jserrors.go, and the JetStream API
// error codes (nats-server's server/errors.json).
func errorCode(err error) hub.ErrorCode {
	switch {
	case err == nil:
		return hub.OK
	// The client is not connected or gave up (ReconnectBufSize -1: no buffering while
	// reconnecting, so an outage fails at once instead of queueing).
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrConnectionReconnecting),
		errors.Is(err, nats.ErrReconnectBufExceeded), errors.Is(err, nats.ErrNoServers),
		errors.Is(err, nats.ErrConnectionDraining), errors.Is(err, nats.ErrDisconnected):
		return hub.Unavailable
	// No ack within the publish timeout: the outcome is unknown, a retry is safe (the
	// stream drops the duplicate by Nats-Msg-Id).
	case errors.Is(err, nats.ErrTimeout), errors.Is(err, jetstream.ErrNoHeartbeat):
		return hub.Unavailable
	// No stream listens on the subject: nothing would store the event (like RabbitMQ's
	// unroutable return).
	case errors.Is(err, nats.ErrNoStreamResponse), errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, nats.ErrStreamNotFound), errors.Is(err, jetstream.ErrStreamNotFound):
		return hub.NotFound
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired),
		errors.Is(err, nats.ErrAuthRevoked), errors.Is(err, nats.ErrPermissionViolation):
		return hub.PermissionDenied
	case errors.Is(err, nats.ErrMaxPayload), errors.Is(err, nats.ErrBadSubject), errors.Is(err, nats.ErrInvalidMsg),
		errors.Is(err, nats.ErrHeadersNotSupported):
		return hub.InvalidArgument
	}
	var api *nats.APIError
	if errors.As(err, &api) {
		switch {
		case api.ErrorCode == nats.JSErrCodeStreamNotFound:
			return hub.NotFound
		case api.ErrorCode == nats.JSErrCodeMessageNotFound:
			return hub.NotFound
		case api.Code == 503: // JetStream not enabled, no quorum
			return hub.Unavailable
		case api.Code == 429:
			return hub.ResourceExhausted
		case api.Code == 400: // e.g. maximum message size, bad request
			return hub.InvalidArgument
		}
	}
	return watermill.DefaultErrorCode(err)
}
