package cloudevent

import (
	"crypto/rand"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// IDPrefix marks hub-generated ids. R2 asks for `evt_<ULID>`; C1 asks for a ULID so
// consumers can be idempotent. `evt_<ULID>` satisfies both: the id is unique, sorts by
// creation time, and the ULID is recovered by stripping the prefix (ParseID).
const IDPrefix = "evt_"

var (
	entropyMu sync.Mutex
	// Monotonic entropy keeps ids generated in the same millisecond increasing.
	entropy = ulid.Monotonic(rand.Reader, 0)
)

// NewID returns a fresh `evt_<ULID>` id.
func NewID() string { return NewIDAt(time.Now()) }

// NewIDAt returns an id whose ULID timestamp is t.
func NewIDAt(t time.Time) string {
	entropyMu.Lock()
	id, err := ulid.New(ulid.Timestamp(t), entropy)
	entropyMu.Unlock()
	if err != nil { // entropy exhausted within one ms: fall back to a fresh reader
		id = ulid.MustNew(ulid.Timestamp(t), rand.Reader)
	}
	return IDPrefix + id.String()
}

// ParseID returns the ULID inside an `evt_<ULID>` id (or a bare ULID).
func ParseID(id string) (ulid.ULID, error) {
	return ulid.ParseStrict(strings.TrimPrefix(id, IDPrefix))
}
