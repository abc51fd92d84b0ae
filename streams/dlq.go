package streams

import "strings"

// Dead-letter stream names (R4.6, E6, E8).
const (
	// DLQSuffix makes a stream's dead-letter stream, "<stream>:dlq" (R4.6).
	DLQSuffix = ":dlq"
	// CategoryDLQ is the single dead-letter stream of the per-category convention (E6, E8).
	CategoryDLQ = "events.dlq"
)

// DLQStreamFor is the dead-letter stream of a stream: "events.dlq" for per-category
// streams (E8), "<stream>:dlq" otherwise (R4.6).
func DLQStreamFor(stream string) string {
	if strings.HasPrefix(stream, CategoryPrefix) {
		return CategoryDLQ
	}
	return stream + DLQSuffix
}

// Reasons an entry is dead-lettered: the dlq_reason field of a dead-letter entry (a
// DLQ listing's Reason) and the `reason` label of event_dlq_total.
const (
	ReasonMaxDeliveries  = "max_deliveries"  // the handler kept failing (R4.6)
	ReasonMalformed      = "malformed"       // a mandatory field is missing or invalid (N2)
	ReasonUnknownVersion = "unknown_version" // the payload's MAJOR version is unknown (E5)
)
