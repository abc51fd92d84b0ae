package ingress

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/koder/eventhub/cloudevent"
)

// MaxIDLength bounds an event id, in characters. CloudEvents sets no limit; the
// ingress does because ids are keys (of the dedupe window, of consumers' processed-event
// records, of webhook deliveries): an evt_<ULID> is 30, a UUID 36.
const MaxIDLength = 256

// checkIDs applies the ingress's id rules to parsed events: at most MaxIDLength
// characters and, with requireULID (C1, for publishers the operator controls), the
// hub's own form evt_<ULID>. batch prefixes pointers with the event's index.
func checkIDs(evs []*cloudevent.Event, batch, requireULID bool) []FieldError {
	var out []FieldError
	for i, ev := range evs {
		ptr := "/id"
		if batch {
			ptr = "/" + strconv.Itoa(i) + "/id"
		}
		if n := utf8.RuneCountInString(ev.ID); n > MaxIDLength {
			out = append(out, FieldError{Field: "id", Pointer: ptr, Detail: fmt.Sprintf("at most %d characters, got %d", MaxIDLength, n)})
			continue
		}
		if requireULID && !isHubID(ev.ID) {
			out = append(out, FieldError{Field: "id", Pointer: ptr,
				Detail: fmt.Sprintf("must be %s<ULID> (C1; e.g. %s): this ingress requires hub-style ids", cloudevent.IDPrefix, cloudevent.NewID())})
		}
	}
	return out
}

// isHubID reports whether id is evt_ followed by a canonical 26-character ULID.
func isHubID(id string) bool {
	rest, ok := strings.CutPrefix(id, cloudevent.IDPrefix)
	if !ok || len(rest) != 26 {
		return false
	}
	_, err := cloudevent.ParseID(id)
	return err == nil
}
