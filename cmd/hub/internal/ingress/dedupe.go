package ingress

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// published is what publish did with a request's events.
type published struct {
	duplicates []string     // ids accepted earlier within the window: not stored again
	conflicts  []FieldError // ids accepted earlier with other content: nothing was stored
}

// publish hands evs to the publisher, through the deduper when there is one: events
// already accepted within the window are left out (duplicates), and when one id was
// accepted with other content nothing is published at all (conflicts, a 409).
func (h *Handler) publish(ctx context.Context, evs []*cloudevent.Event, batch bool) (published, error) {
	verdicts, err := h.admit(ctx, evs)
	if err != nil {
		return published{}, err
	}
	return h.judged(evs, verdicts, batch), nil
}

// admit publishes evs, through the deduper when there is one (then it returns one
// verdict per event; nil without a deduper). Group commit calls it with the events of
// several requests.
func (h *Handler) admit(ctx context.Context, evs []*cloudevent.Event) ([]hub.Admission, error) {
	if h.Deduper == nil {
		return nil, h.Publisher.Publish(ctx, evs...)
	}
	keys := make([]hub.EventKey, len(evs))
	for i, ev := range evs {
		keys[i] = hub.KeyOf(ev)
	}
	return h.Deduper.Admit(ctx, keys, h.DedupeWindow, func(ctx context.Context, fresh []int) error {
		pick := evs
		if len(fresh) != len(evs) {
			pick = make([]*cloudevent.Event, len(fresh))
			for j, i := range fresh {
				pick[j] = evs[i]
			}
		}
		return h.Publisher.Publish(ctx, pick...)
	})
}

// judged turns one request's verdicts into its duplicates and conflicts.
func (h *Handler) judged(evs []*cloudevent.Event, verdicts []hub.Admission, batch bool) published {
	var res published
	window := h.DedupeWindow
	if window <= 0 {
		window = hub.DefaultIdempotencyTTL
	}
	for i, v := range verdicts {
		switch v {
		case hub.Duplicate:
			res.duplicates = append(res.duplicates, evs[i].ID)
		case hub.Conflict:
			ptr := "/id"
			if batch {
				ptr = "/" + strconv.Itoa(i) + "/id"
			}
			res.conflicts = append(res.conflicts, FieldError{Field: "id", Pointer: ptr, Code: CodeIDConflict,
				Detail: fmt.Sprintf("%s was accepted for tenant %q within the last %s with different content; a different event needs a new id",
					evs[i].ID, evs[i].TenantID(), window.Round(time.Second))})
		}
	}
	if len(res.conflicts) > 0 {
		res.duplicates = nil // nothing of the request was accepted
	}
	return res
}

// CodeIDConflict marks the field errors of a 409: an id reused for other content.
const CodeIDConflict = "EVENT_ID_CONFLICT"

func writeConflict(w http.ResponseWriter, fes []FieldError) {
	writeProblem(w, Problem{Type: ProblemTypeBase + "conflict", Title: "Event id already used for other content", Status: http.StatusConflict,
		Detail: fmt.Sprintf("%d event id(s) already accepted with different content; nothing of this request was stored", len(fes)), Errors: fes})
}
