package cli

import (
	"errors"

	"github.com/koder/eventhub/cloudevent"
)

// parseEventsJSON parses a structured CloudEvent or a batch array.
func parseEventsJSON(b []byte) ([]*cloudevent.Event, error) {
	return nil, errors.New("CloudEvent JSON parsing is not available in this build")
}
