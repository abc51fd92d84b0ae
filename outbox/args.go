package outbox

import (
	"encoding/json"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Kind is the River job kind of an outbox row.
const Kind = "eventhub.outbox"

// rowArgs is an outbox row as River stores it (the job's args).
//
// Event is the event's structured CloudEvents JSON kept as a JSON *string*, not an
// object: PostgreSQL's jsonb rewrites objects (key order, whitespace, duplicate keys),
// which would change the data bytes the producer wrote; a string survives unchanged.
type rowArgs struct {
	Destination string `json:"destination"`
	EventID     string `json:"event_id"`
	EventType   string `json:"event_type"`
	Event       string `json:"event"`
}

func (rowArgs) Kind() string { return Kind }

// insertParams turns items into River insert parameters, one job per item (O1: one
// row per destination). A nil event or an empty destination is InvalidArgument.
func (o *Outbox) insertParams(items []hub.OutboxItem) ([]river.InsertManyParams, error) {
	params := make([]river.InsertManyParams, len(items))
	for i, it := range items {
		if it.Destination == "" {
			return nil, hub.Errorf(hub.InvalidArgument, "outbox: item %d: empty destination", i)
		}
		if it.Event == nil {
			return nil, hub.Errorf(hub.InvalidArgument, "outbox: item %d: nil event", i)
		}
		b, err := json.Marshal(it.Event)
		if err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "outbox: item %d: encode event %s: %w", i, it.Event.ID, err)
		}
		params[i] = river.InsertManyParams{
			Args:       rowArgs{Destination: it.Destination, EventID: it.Event.ID, EventType: it.Event.Type, Event: string(b)},
			InsertOpts: &river.InsertOpts{Queue: o.cfg.Queue, MaxAttempts: o.cfg.MaxAttempts},
		}
	}
	return params, nil
}

// event decodes the stored event without validating it again: the producer's checks
// ran before it was stored, and the relay delivers what was committed.
func (a *rowArgs) event() (*cloudevent.Event, error) {
	ev := new(cloudevent.Event)
	if err := ev.UnmarshalJSON([]byte(a.Event)); err != nil {
		return nil, err
	}
	return ev, nil
}
