package cli

import (
	"bytes"

	"github.com/koder/eventhub/cloudevent"
)

// parseEventsJSON parses a structured CloudEvent or a batch array.
func parseEventsJSON(b []byte) ([]*cloudevent.Event, error) {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		return cloudevent.ParseBatch(b)
	}
	ev, err := cloudevent.ParseJSON(b)
	if err != nil {
		return nil, err
	}
	return []*cloudevent.Event{ev}, nil
}
