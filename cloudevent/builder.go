package cloudevent

import (
	"encoding/json"
	"errors"
	"time"
)

// ContentTypeJSON is the default datacontenttype of events built with New.
const ContentTypeJSON = "application/json"

// TimePrecision is the resolution of the time New stamps on an event. Microseconds
// because PostgreSQL timestamps (outbox, kdbstream) hold no more: an event read back
// from a table then equals the one written.
const TimePrecision = time.Microsecond

// New returns an event with a fresh `evt_<ULID>` id, the current UTC time, specversion
// 1.0 and datacontenttype application/json. The id's ULID carries the same millisecond
// as Time. Set the tenant (SetTenantID) before publishing: C1 requires it.
func New(source, typ string) *Event {
	now := time.Now().UTC().Truncate(TimePrecision)
	return &Event{
		ID:              NewIDAt(now),
		Source:          source,
		SpecVersion:     SpecVersion,
		Type:            typ,
		DataContentType: ContentTypeJSON,
		Time:            now,
	}
}

// SetData sets the payload and its content type ("" means application/json).
//
// []byte and json.RawMessage are kept as they are (not copied: the caller must not
// modify them afterwards); a string is the payload's text for non-JSON types and a
// JSON string for JSON types; anything else is encoded with json.Marshal, which
// requires a JSON content type. A nil v removes the data.
func (e *Event) SetData(contentType string, v any) error {
	if contentType == "" {
		contentType = ContentTypeJSON
	}
	jsonType := IsJSON(contentType)
	var data []byte
	switch x := v.(type) {
	case nil:
	case []byte:
		data = x
	case json.RawMessage:
		data = x
	case string:
		if !jsonType {
			data = []byte(x)
			break
		}
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		data = b
	default:
		if !jsonType {
			return errors.New("cloudevent: SetData: a " + contentType + " payload must be []byte or string")
		}
		b, err := json.Marshal(x)
		if err != nil {
			return errors.Join(errors.New("cloudevent: SetData"), err)
		}
		data = b
	}
	if len(data) == 0 {
		data = nil // empty data is no data (see Event)
	}
	e.DataContentType = contentType
	e.Data = data
	return nil
}

// DataAs decodes JSON data into v.
func (e *Event) DataAs(v any) error {
	if !IsJSON(e.DataContentType) {
		return errors.New("cloudevent: DataAs: data is " + e.DataContentType + ", not JSON")
	}
	if len(e.Data) == 0 {
		return errors.New("cloudevent: DataAs: event has no data")
	}
	return json.Unmarshal(e.Data, v)
}

// setString sets or (for "") removes a string extension.
func (e *Event) setString(name, v string) *Event {
	if v == "" {
		delete(e.Extensions, name)
		return e
	}
	e.SetExtension(name, v)
	return e
}

// SetTenantID sets the tenantid extension (C1); "" removes it. It returns e to chain.
func (e *Event) SetTenantID(id string) *Event { return e.setString(ExtTenantID, id) }

// SetActor sets the actor extension (R2: system, user:<id>, admin:<id>).
func (e *Event) SetActor(actor string) *Event { return e.setString(ExtActor, actor) }

// SetCorrelationID sets the correlationid extension (E4).
func (e *Event) SetCorrelationID(id string) *Event { return e.setString(ExtCorrelationID, id) }

// SetDataVersion sets the dataversion extension (E5), the semver of the payload schema.
func (e *Event) SetDataVersion(v string) *Event { return e.setString(ExtDataVersion, v) }

// SetSubject sets the subject attribute (R2 subject_id).
func (e *Event) SetSubject(s string) *Event { e.Subject = s; return e }
