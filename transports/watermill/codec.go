package watermill

import (
	"mime"
	"strings"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Mode is the CloudEvents content mode of the messages a Transport publishes.
type Mode string

const (
	// ModeBinary puts the data in the payload and every attribute in "ce_" metadata
	// (cloudevent.ToMessage): Watermill handlers read the payload as is. Default.
	ModeBinary Mode = "binary"
	// ModeStructured puts the whole event, as application/cloudevents+json, in the
	// payload; for consumers that only look at payloads.
	ModeStructured Mode = "structured"
)

// Metadata keys of the mapping besides cloudevent's "ce_" ones.
const (
	// MetaContentType marks a structured-mode message (application/cloudevents+json),
	// the CloudEvents Kafka binding's convention for the content-type header.
	MetaContentType = "content-type"
	// MetaDeliveries, when a subscriber sets it, is how many times the broker has
	// delivered the message (1 the first time). The consumer then dead-letters by the
	// broker's count; without it, it counts in process. Package natsjs sets it from
	// JetStream's metadata.
	MetaDeliveries = "eventhub_deliveries"
)

// ContentTypeStructured is the media type of a structured-mode payload.
const ContentTypeStructured = "application/cloudevents+json"

// Encode maps ev onto a Watermill message in mode ("" means binary). The message UUID is
// the event id in both modes.
func Encode(ev *cloudevent.Event, mode Mode) (*message.Message, error) {
	if ev == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "watermill: nil event")
	}
	switch mode {
	case ModeBinary, "":
		msg, err := cloudevent.ToMessage(ev)
		if err != nil {
			return nil, hub.Wrap(hub.InvalidArgument, err)
		}
		return msg, nil
	case ModeStructured:
		b, err := ev.MarshalJSON()
		if err != nil {
			return nil, hub.Wrap(hub.InvalidArgument, err)
		}
		msg := message.NewMessage(ev.ID, b)
		msg.Metadata[MetaContentType] = ContentTypeStructured
		return msg, nil
	}
	return nil, hub.Errorf(hub.InvalidArgument, "watermill: mode %q, want %s or %s", mode, ModeBinary, ModeStructured)
}

// Decode rebuilds and validates the event carried by msg, in either mode: a
// "content-type" of application/cloudevents+json (parameters allowed) means structured,
// anything else binary. A malformed message is an InvalidArgument error (a
// *cloudevent.ValidationError for a bad event). In binary mode the event's data is
// msg.Payload itself.
func Decode(msg *message.Message) (*cloudevent.Event, error) {
	if msg == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "watermill: nil message")
	}
	if ct := msg.Metadata.Get(MetaContentType); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		switch {
		case err != nil:
			return nil, hub.Errorf(hub.InvalidArgument, "watermill: content-type %q: %v", ct, err)
		case mt == ContentTypeStructured:
			ev, err := cloudevent.ParseJSON(msg.Payload)
			if err != nil {
				return nil, err
			}
			if msg.UUID != "" && msg.UUID != ev.ID {
				return nil, hub.Errorf(hub.InvalidArgument, "watermill: message UUID %q differs from the event id %q", msg.UUID, ev.ID)
			}
			return ev, nil
		case strings.HasPrefix(mt, "application/cloudevents"):
			return nil, hub.Errorf(hub.InvalidArgument, "watermill: content-type %q: one message carries one event (binary or %s)", ct, ContentTypeStructured)
		}
	}
	return cloudevent.FromMessage(msg)
}
