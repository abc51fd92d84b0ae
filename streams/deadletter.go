package streams

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Fields a dead-letter entry carries besides the original entry's fields (R4.6, E6).
// DLQ tooling (list, inspect, replay) strips exactly these before re-publishing.
const (
	FieldError         = "error"          // the last handler or decode error
	FieldDeliveryCount = "delivery_count" // deliveries before the move
	FieldSourceStream  = "source_stream"  // where the entry came from, and where replay sends it
	FieldGroup         = "group"          // the consumer group that gave up
	FieldOriginalID    = "original_id"    // the entry id in the source stream
	FieldReason        = "dlq_reason"     // one of the Reason* constants
)

// MetaFields lists the dead-letter metadata field names, for tools that separate them
// from the original fields.
var MetaFields = []string{FieldError, FieldDeliveryCount, FieldSourceStream, FieldGroup, FieldOriginalID, FieldReason}

// r2Order is the order of the seven R2 fields, kept first in a dead-letter entry so an
// operator reading it with XRANGE sees the envelope as it was written.
var r2Order = []string{"type", "event_id", "occurred_at", "tenant_id", "subject_id", "actor", "data"}

// e1Order is the order of the seed 001 fields, for entries in that encoding (they have
// no "type" field).
var e1Order = []string{"event_id", "correlation_id", "event_type", "version", "timestamp", "source", "data", "metadata"}

// shadowPrefix renames an original field that collides with a metadata name (an
// extension called "error" or "group"); extension names never contain '_', so the
// renamed field cannot collide with anything else, and SplitDeadLetter restores it.
const shadowPrefix = "orig_"

// OrderedFields flattens values into key, value pairs: the envelope's fields first, in
// their order (R2's, or seed 001's for an entry with event_type and no type), then the
// rest sorted by name, so an entry re-written from a map reads like a published one.
func OrderedFields(values map[string]string) []string {
	order := r2Order
	if _, r2 := values["type"]; !r2 {
		if _, e1 := values["event_type"]; e1 {
			order = e1Order
		}
	}
	out := make([]string, 0, 2*len(values)+2*len(MetaFields))
	for _, k := range order {
		if v, ok := values[k]; ok {
			out = append(out, k, v)
		}
	}
	rest := make([]string, 0, len(values))
	for k := range values {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		out = append(out, k, values[k])
	}
	return out
}

// DeadLetterFields builds the flat field list of a dead-letter entry: the original
// fields (OrderedFields), then the metadata.
func DeadLetterFields(values map[string]string, errText string, deliveries int64, stream, group, id, reason string) []string {
	out := OrderedFields(values)
	for i := 0; i < len(out); i += 2 {
		if slices.Contains(MetaFields, out[i]) {
			out[i] = shadowPrefix + out[i]
		}
	}
	return append(out,
		FieldError, errText,
		FieldDeliveryCount, strconv.FormatInt(deliveries, 10),
		FieldSourceStream, stream,
		FieldGroup, group,
		FieldOriginalID, id,
		FieldReason, reason,
	)
}

// SplitDeadLetter separates a dead-letter entry's values into the original fields (as
// they were in the source stream) and the metadata fields.
func SplitDeadLetter(values map[string]string) (original, meta map[string]string) {
	original = make(map[string]string, len(values))
	meta = make(map[string]string, len(MetaFields))
	for k, v := range values {
		if slices.Contains(MetaFields, k) {
			meta[k] = v
		} else {
			original[k] = v
		}
	}
	for _, m := range MetaFields {
		if v, ok := original[shadowPrefix+m]; ok {
			delete(original, shadowPrefix+m)
			original[m] = v
		}
	}
	return original, meta
}

// DeadLetter is one entry of a dead-letter stream, split into the original entry and
// the metadata the consumer added when it gave up (R4.6, E6). The Redis and kdbstream
// DLQs both answer it (redisstream.DeadLetter and kdbstream.DeadLetter are this type),
// so the admin API's JSON and every tool read both buses' dead letters alike.
type DeadLetter struct {
	ID           string            `json:"id"`            // the entry id in the dead-letter stream
	Time         time.Time         `json:"time"`          // when it was dead-lettered (from ID)
	Fields       map[string]string `json:"fields"`        // the original R2 fields, as in the source stream
	Error        string            `json:"error"`         // the last handler or decode error
	Reason       string            `json:"reason"`        // ReasonMaxDeliveries, ReasonMalformed or ReasonUnknownVersion
	SourceStream string            `json:"source_stream"` // where it came from, and where replay sends it
	Group        string            `json:"group"`         // the group that gave up
	OriginalID   string            `json:"original_id"`   // its id in the source stream
	Deliveries   int64             `json:"deliveries"`    // deliveries before the move
}

// ParseDeadLetter reads the dead-letter entry id, with the given field values, as a
// DeadLetter; its time is the id's millisecond part (zero when id has none).
func ParseDeadLetter(id string, values map[string]string) DeadLetter {
	original, meta := SplitDeadLetter(values)
	dl := DeadLetter{
		ID: id, Fields: original,
		Error: meta[FieldError], Reason: meta[FieldReason],
		SourceStream: meta[FieldSourceStream], Group: meta[FieldGroup],
		OriginalID: meta[FieldOriginalID],
	}
	dl.Deliveries, _ = strconv.ParseInt(meta[FieldDeliveryCount], 10, 64)
	if ms, _, _ := strings.Cut(id, "-"); ms != "" {
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil {
			dl.Time = time.UnixMilli(n).UTC()
		}
	}
	return dl
}
