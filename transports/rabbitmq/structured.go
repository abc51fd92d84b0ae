package rabbitmq

import (
	"github.com/koder/eventhub/cloudevent"
)

// marshalStructured and unmarshalStructured are the structured mode: the whole event
// in cloudevent's lossless CloudEvents JSON format, content type
// application/cloudevents+json.
func marshalStructured(ev *cloudevent.Event) ([]byte, error) {
	return ev.MarshalJSON()
}

func unmarshalStructured(b []byte) (*cloudevent.Event, error) {
	return cloudevent.ParseJSON(b)
}
