package streams

import (
	"fmt"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// DefaultMaxLen is the approximate cap both transports' publishers trim each stream to
// (R6: XADD MAXLEN ~ 100000), so that switching buses changes no retention. The cap
// trims entries whether or not every group has read them: size it above the backlog
// the slowest group may build, or trim by age (MinIDAge) instead.
const DefaultMaxLen = 100000

// EncodeEvent names the stream of the i-th event of a batch and encodes its R2 fields,
// the per-event step of both transports' Send. Errors name transport and the event.
func EncodeEvent(transport string, namer Namer, i int, ev *cloudevent.Event) (stream string, fields []string, err error) {
	stream, err = namer(ev)
	if err != nil {
		return "", nil, hub.Wrap(hub.InvalidArgument, err)
	}
	fields, err = cloudevent.EncodeFields(ev)
	if err != nil {
		return "", nil, fmt.Errorf("%s: event %d (%s): %w", transport, i, ev.ID, err)
	}
	return stream, fields, nil
}
