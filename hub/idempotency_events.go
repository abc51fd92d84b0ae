package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"slices"
	"time"

	"github.com/koder/eventhub/cloudevent"
)

// The publish side of R5: IdempotencyStore lets a consumer run a handler once per event
// id; an EventDeduper lets an intake (the binary's HTTP ingress) accept an event once per
// (tenant, id), so a producer that retries after a lost answer stores nothing twice, and
// one that reuses an id for other content is told so instead of being silently dropped.

// EventKey is an event as a window of accepted ids knows it: the tenant and id it is
// accepted under, and the digest of its content (ContentDigest).
type EventKey struct {
	Tenant string
	ID     string
	Digest [sha256.Size]byte
}

// KeyOf returns the key of ev, digest included.
func KeyOf(ev *cloudevent.Event) EventKey {
	return EventKey{Tenant: ev.TenantID(), ID: ev.ID, Digest: ContentDigest(ev)}
}

// ContentDigest is the SHA-256 of what makes two events with one id "identical": every
// context attribute and extension, and the data. Precisely, in a length-prefixed
// encoding that no two different events share:
//   - specversion, id, source, type, dataschema, subject, and time as RFC 3339 in UTC
//     with nanoseconds (absent stays absent: the hub fills it only after this);
//   - datacontenttype, absent counted as application/json (what CloudEvents says it is);
//   - every extension by name, with its type and canonical string form, except
//     traceparent and tracestate: those describe the delivery hop (a retry carries a new
//     span), not the event;
//   - the data: JSON data without insignificant whitespace (json.Compact: the same
//     document pretty-printed is the same data), any other data byte for byte.
//
// So a retry of the same event, in any HTTP mode or inside a batch, has the same
// digest, and a changed attribute, extension or payload a different one.
func ContentDigest(ev *cloudevent.Event) [sha256.Size]byte {
	b := make([]byte, 0, 256+len(ev.Data))
	b = appendField(b, "specversion", ev.SpecVersion)
	b = appendField(b, "id", ev.ID)
	b = appendField(b, "source", ev.Source)
	b = appendField(b, "type", ev.Type)
	ct := ev.DataContentType
	if ct == "" {
		ct = cloudevent.ContentTypeJSON
	}
	b = appendField(b, "datacontenttype", ct)
	b = appendField(b, "dataschema", ev.DataSchema)
	b = appendField(b, "subject", ev.Subject)
	if !ev.Time.IsZero() {
		b = appendField(b, "time", ev.Time.UTC().Format(time.RFC3339Nano))
	}
	names := make([]string, 0, len(ev.Extensions))
	for name := range ev.Extensions {
		if name != cloudevent.ExtTraceParent && name != cloudevent.ExtTraceState {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		v := ev.Extensions[name]
		s, _ := cloudevent.FormatValue(v)
		b = appendField(b, "ext:"+name+":"+extKind(v), s)
	}
	b = append(b, "data\x00"...)
	if len(ev.Data) > 0 && cloudevent.IsJSON(ev.DataContentType) {
		var c bytes.Buffer
		c.Grow(len(ev.Data))
		if json.Compact(&c, ev.Data) == nil {
			return sha256.Sum256(append(b, c.Bytes()...))
		}
	}
	return sha256.Sum256(append(b, ev.Data...))
}

// appendField appends name, a NUL, the length of value and value.
func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, 0)
	b = binary.AppendUvarint(b, uint64(len(value)))
	return append(b, value...)
}

// extKind names an extension value's type, so the string "1" and the integer 1 differ.
func extKind(v any) string {
	switch v.(type) {
	case string:
		return "s"
	case bool:
		return "b"
	case int32:
		return "i"
	case []byte:
		return "x"
	case time.Time:
		return "t"
	case cloudevent.URI:
		return "u"
	case cloudevent.URIRef:
		return "r"
	}
	return "?"
}

// Admission is an EventDeduper's verdict on one event.
type Admission uint8

const (
	// Admitted: not seen within the window; published now.
	Admitted Admission = iota
	// Duplicate: the same (tenant, id) with the same content was accepted within the
	// window (or earlier in the same batch); not published again.
	Duplicate
	// Conflict: the same (tenant, id) was accepted with different content within the
	// window; the whole request is refused and nothing of it is published.
	Conflict
)

func (a Admission) String() string {
	switch a {
	case Admitted:
		return "admitted"
	case Duplicate:
		return "duplicate"
	case Conflict:
		return "conflict"
	}
	return "unknown"
}

// EventDeduper accepts each (tenant, event id) once within a window (R5, E3 on the
// publish side).
//
// Admit classifies every key. When any is a Conflict it returns at once and publish is
// not called: nothing of the request is stored. Otherwise, when some are Admitted, it
// calls publish with their indexes and records them so that the record exists if and
// only if publish succeeded (a store may write it in publish's own transaction; see the
// implementation for the guarantee it gives against concurrent requests). Duplicates
// are never published again. The error is publish's, or the store's (then nothing was
// published). ttl <= 0 means DefaultIdempotencyTTL. Safe for concurrent use.
type EventDeduper interface {
	Admit(ctx context.Context, keys []EventKey, ttl time.Duration, publish func(ctx context.Context, fresh []int) error) ([]Admission, error)
}

// BatchAdmissions returns the starting verdicts of a batch: Admitted, except that a
// later event with the (tenant, id) of an earlier one of the same batch is its
// Duplicate (same digest) or Conflict (another digest). A deduper then judges the
// Admitted ones against its window.
func BatchAdmissions(keys []EventKey) []Admission {
	out := make([]Admission, len(keys))
	if len(keys) < 2 {
		return out
	}
	type tid struct{ tenant, id string }
	first := make(map[tid]int, len(keys))
	for i, k := range keys {
		j, seen := first[tid{k.Tenant, k.ID}]
		switch {
		case !seen:
			first[tid{k.Tenant, k.ID}] = i
		case keys[j].Digest == k.Digest:
			out[i] = Duplicate
		default:
			out[i] = Conflict
		}
	}
	return out
}

// AnyConflict reports whether some verdict is Conflict.
func AnyConflict(as []Admission) bool { return slices.Contains(as, Conflict) }
