package cloudevent

import (
	"strconv"
	"strings"
	"time"
)

// Wire defaults of the flat stream encodings (R2 and the seed 001 fields).
const (
	// DefaultActor is the actor written for an event without one: seed 000's own
	// example value, "who/what triggered" when no user did.
	DefaultActor = "system"
	// EmptyData is the data written for an event without data. An empty JSON object
	// rather than "null": consumers read fields of the payload (data.user_id), which
	// an object survives and null does not. ce_defaulted tells the hub's decoders that
	// the event had no data, so "{}" sent as data is still told apart from no data.
	EmptyData = "{}"
	// DefaultDataVersion is the seed 001 version written for an event without a
	// dataversion: the first version of any payload schema (E5).
	DefaultDataVersion = "1.0.0"
)

// FieldDefaults are the values the stream encoders write for mandatory fields the
// CloudEvent has no value for. Each use is recorded in the entry's ce_defaulted field,
// so the hub's decoders drop the value again (the event round-trips unchanged) while
// any other consumer sees a complete entry.
type FieldDefaults struct {
	// Actor is R2's actor for events without the actor extension (default
	// DefaultActor, "system").
	Actor string
	// Subject is R2's subject_id for events without a subject. Empty: such an event is
	// refused, since there is no honest guess at its primary subject.
	Subject string
	// Time is the occurred_at (or seed 001 timestamp) of events without a time: the
	// hub's acceptance time (hub.AcceptedAtFrom). Zero means now.
	Time time.Time
}

func (d FieldDefaults) actor() string {
	if d.Actor == "" {
		return DefaultActor
	}
	return d.Actor
}

func (d FieldDefaults) time() time.Time {
	if d.Time.IsZero() {
		return time.Now()
	}
	return d.Time
}

// defaulted collects the names of the fields an encoder filled with a default, in the
// order they were filled (the encoders fill them in their envelope's field order).
type defaulted struct{ names []string }

// use records field and returns v, for `x = filled.use(Field, v)`.
func (d *defaulted) use(field, v string) string {
	d.names = append(d.names, field)
	return v
}

func (d *defaulted) String() string { return strings.Join(d.names, ",") }

// defaultable maps each field name an R2 ce_defaulted list may hold to its presence
// bit. Only the fields CloudEvents leaves optional can be defaulted.
var defaultable = map[string]int{
	FieldOccurredAt: hasOccurredAt, FieldSubjectID: hasSubjectID, FieldActor: hasActor, FieldData: hasData,
}

// parseDefaulted reads an R2 ce_defaulted list into presence bits; unknown or repeated
// names are problems.
func parseDefaulted(list string, p *problems) int {
	return parseDefaultedWith(list, defaultable, p)
}

func parseDefaultedWith(list string, names map[string]int, p *problems) int {
	bits := 0
	for name := range strings.SplitSeq(list, ",") {
		bit, ok := names[name]
		switch {
		case !ok:
			p.add(FieldDefaulted, "names "+strconv.Quote(name)+", which is not a field with a wire default")
		case bits&bit != 0:
			p.add(FieldDefaulted, "names "+strconv.Quote(name)+" twice")
		}
		bits |= bit
	}
	return bits
}

// FieldsOption adjusts DecodeFields.
type FieldsOption func(*fieldsOptions)

type fieldsOptions struct{ allowEmpty bool }

// AllowEmptyFields makes DecodeFields accept R2 fields that are present but empty, as
// entries written before every field had a value carry them (actor "", subject_id "",
// occurred_at "", data ""): each empty one means unset. Without it such an entry is
// malformed (N2), which is what any consumer written from seed 000 concludes too.
func AllowEmptyFields() FieldsOption { return func(o *fieldsOptions) { o.allowEmpty = true } }
