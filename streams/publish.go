package streams

import (
	"context"

	"github.com/koder/eventhub/cloudevent"
)

// DefaultMaxLen is the approximate cap both transports' publishers trim each stream to
// (R6: XADD MAXLEN ~ 100000), so that switching buses changes no retention. The cap
// trims entries whether or not every group has read them: size it above the backlog
// the slowest group may build, or trim by age (MinIDAge) instead.
const DefaultMaxLen = 100000

// EncodeEvent is Wire{}.EncodeEvent without a context: the R2 encoding with its
// defaults (actor "system", the current time for events without one; an event without
// a subject is refused).
func EncodeEvent(transport string, namer Namer, i int, ev *cloudevent.Event) (stream string, fields []string, err error) {
	return Wire{}.EncodeEvent(context.Background(), transport, namer, i, ev)
}
