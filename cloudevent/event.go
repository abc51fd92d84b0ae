// Package cloudevent is the hub's model of a CloudEvent 1.0 and its lossless codecs.
//
// The model is hand-written rather than taken from cloudevents/sdk-go because the SDK's
// event type loses information the hub must keep: extension integers are truncated to
// int32 from float64 on structured decode, extension names are not length-checked,
// `[]byte` data is forced to base64 and HTTP header values are not percent-encoded.
// The flat codecs (HTTP with Eventhub-Ext-Types, the R2 Redis fields, Watermill
// messages) round-trip an Event without loss, which the property tests pin; structured
// JSON keeps extension types only up to JSON's own (below).
//
// Decoders return events in one normal form, so a round trip compares with
// reflect.DeepEqual: empty data is no data (nil), times are UTC, an event without
// extensions has a nil map. The structured JSON format keeps extension types only up
// to JSON's own (string, number, boolean); the flat codecs (R2 fields, Watermill
// metadata, HTTP with the Eventhub-Ext-Types header) keep every type. See
// docs/cloudevent.md for the field mappings.
package cloudevent

import (
	"bytes"
	"maps"
	"time"
)

// SpecVersion is the only CloudEvents version the hub speaks.
const SpecVersion = "1.0"

// Extension attribute names used by the hub. All obey the CloudEvents naming rule
// (lowercase a-z0-9, at most 20 characters).
const (
	ExtTenantID      = "tenantid"      // C1: tenant scope; R2 field tenant_id
	ExtActor         = "actor"         // R2: system, user:<id>, admin:<id>
	ExtCorrelationID = "correlationid" // E4: ties a request chain together
	ExtDataVersion   = "dataversion"   // E5: semver of the payload schema
	ExtTraceParent   = "traceparent"   // W3C trace context (Distributed Tracing extension)
	ExtTraceState    = "tracestate"
)

// URI is an extension value of the CloudEvents type URI (absolute).
type URI string

// URIRef is an extension value of the CloudEvents type URI-reference.
type URIRef string

// Event is a CloudEvent 1.0.
//
// Data holds the payload bytes exactly as produced: JSON text when DataContentType is
// JSON (or empty, which means application/json), otherwise opaque bytes. Extension
// values are one of: string, bool, int32, []byte (Binary), time.Time (Timestamp),
// URI or URIRef. Keeping the CloudEvents type of each value is what lets every codec
// round-trip an event unchanged.
type Event struct {
	ID              string
	Source          string
	SpecVersion     string
	Type            string
	DataContentType string
	DataSchema      string
	Subject         string
	Time            time.Time
	Data            []byte
	Extensions      map[string]any
}

// Extension returns the string form of a string-typed extension, or "" when absent
// or of another type.
func (e *Event) Extension(name string) string {
	if e == nil || e.Extensions == nil {
		return ""
	}
	s, _ := e.Extensions[name].(string)
	return s
}

// SetExtension stores an extension value; a nil value removes it. The name and the
// value's type are checked by Validate, not here, so builders can chain.
func (e *Event) SetExtension(name string, v any) {
	if v == nil {
		delete(e.Extensions, name)
		return
	}
	if e.Extensions == nil {
		e.Extensions = make(map[string]any, 4)
	}
	e.Extensions[name] = v
}

// TenantID returns the tenantid extension (C1).
func (e *Event) TenantID() string { return e.Extension(ExtTenantID) }

// Actor returns the actor extension (R2).
func (e *Event) Actor() string { return e.Extension(ExtActor) }

// CorrelationID returns the correlationid extension (E4).
func (e *Event) CorrelationID() string { return e.Extension(ExtCorrelationID) }

// DataVersion returns the dataversion extension (E5), the semver of the payload schema.
func (e *Event) DataVersion() string { return e.Extension(ExtDataVersion) }

// Clone returns a deep copy, so a transport or handler may not alter the caller's event.
func (e *Event) Clone() *Event {
	if e == nil {
		return nil
	}
	c := *e
	c.Data = bytes.Clone(e.Data)
	if e.Extensions != nil {
		c.Extensions = maps.Clone(e.Extensions)
		for k, v := range c.Extensions {
			if b, ok := v.([]byte); ok {
				c.Extensions[k] = bytes.Clone(b)
			}
		}
	}
	return &c
}
