package cloudevent

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// R2 field names. The first seven are the R2 envelope, in R2's order; the rest carry
// what R2 has no field for, so that every CloudEvent survives CE -> fields -> CE.
// Every other extension travels as a field named after it; extension names are
// [a-z0-9] only, so they can never collide with a name containing "_".
const (
	FieldType       = "type"        // CE type
	FieldEventID    = "event_id"    // CE id (evt_<ULID>)
	FieldOccurredAt = "occurred_at" // CE time, RFC 3339 UTC (a default when the event has none)
	FieldTenantID   = "tenant_id"   // extension tenantid
	FieldSubjectID  = "subject_id"  // CE subject (a default when the event has none)
	FieldActor      = "actor"       // extension actor (a default when the event has none)
	FieldData       = "data"        // the payload as JSON text ("{}" when there is none)

	FieldSource          = "source"          // CE source; absent in hand-written entries: the stream's default
	FieldSpecVersion     = "specversion"     // "1.0"
	FieldDataContentType = "datacontenttype" // absent means application/json
	FieldDataSchema      = "dataschema"
	// FieldDataEncoding says how non-JSON data sits in the data field, which R2 wants
	// to be JSON: DataEncodingText (data is a JSON string holding the UTF-8 text) or
	// DataEncodingBase64 (a JSON string holding the standard base64 of the bytes).
	// Absent: data is the JSON payload itself, byte for byte.
	FieldDataEncoding = "data_encoding"
	// FieldTypes lists the non-string extensions as "name:type,..." (types: boolean,
	// integer, binary, timestamp, uri, urireference), sorted by name. Their fields hold
	// the CloudEvents canonical string form; absent when all extensions are strings.
	FieldTypes = "ce_types"
	// FieldDefaulted lists the mandatory fields whose value is a wire default, because
	// the CloudEvent has none (see FieldDefaults): "occurred_at,subject_id,actor,data" or
	// a part of it, in R2 order. Absent when the event had every value.
	FieldDefaulted = "ce_defaulted"
)

// Values of FieldDataEncoding.
const (
	DataEncodingText   = "text"
	DataEncodingBase64 = "base64"
)

// r2Fields is the number of fields EncodeFields always writes.
const r2Fields = 9

// EncodeFields is EncodeFieldsWith(ev, FieldDefaults{}): actor "system" and the
// current time for events without them, and an error for an event without a subject.
func EncodeFields(ev *Event) ([]string, error) { return EncodeFieldsWith(ev, FieldDefaults{}) }

// EncodeFieldsWith returns the R2 envelope of ev as flat key/value pairs for XADD: the
// seven R2 fields first, in R2 order, then source, specversion, datacontenttype and
// dataschema when set, data_encoding and ce_types when needed, every other extension
// as a field of its own (sorted by name) holding its canonical string, and
// ce_defaulted when a default filled a mandatory field.
//
// No field is ever empty: R2 makes all seven mandatory, and a consumer written from
// seed 000 dead-letters an entry with an empty one (N2). The CloudEvent attributes R2
// needs but CloudEvents leaves optional (actor, subject, time, data) take the values
// of d when the event has none, and ce_defaulted names them, so DecodeFields removes
// them again and the event survives CE -> fields -> CE unchanged. An event without a
// subject and no d.Subject is refused: there is no honest default for R2's "primary
// subject" (the error is a *ValidationError on subject_id).
//
// EncodeFieldsWith validates ev first (the error is a *ValidationError using R2 field
// names), so every entry it writes decodes: a transport called directly, without the
// hub's validation, still cannot poison a stream. It does no reflection and allocates
// the slice once.
func EncodeFieldsWith(ev *Event, d FieldDefaults) ([]string, error) {
	if ev == nil {
		return nil, errors.New("cloudevent: EncodeFields: nil event")
	}
	var p problems
	ev.validate(&p)
	if ev.Subject == "" && d.Subject == "" {
		p.add(FieldSubjectID, "missing: R2 requires a subject; set the event's subject or configure a default subject")
	}
	if len(p.list) > 0 {
		renameToR2(&p, 0)
		return nil, p.err()
	}
	var filled defaulted
	tenant := ev.Extensions[ExtTenantID].(string) // validate checked it
	var occurred string
	if ev.Time.IsZero() {
		occurred = filled.use(FieldOccurredAt, formatTime(d.time()))
	} else {
		occurred = formatTime(ev.Time)
	}
	subject := ev.Subject
	if subject == "" {
		subject = filled.use(FieldSubjectID, d.Subject)
	}
	actor, _ := FormatValue(ev.Extensions[ExtActor])
	if actor == "" {
		actor = filled.use(FieldActor, d.actor())
	}
	data, enc := encodeData(ev.DataContentType, ev.Data)
	if data == "" {
		data = filled.use(FieldData, EmptyData)
	}

	n := r2Fields + len(ev.Extensions) + 4
	out := make([]string, 0, 2*n)
	out = append(out,
		FieldType, ev.Type,
		FieldEventID, ev.ID,
		FieldOccurredAt, occurred,
		FieldTenantID, tenant,
		FieldSubjectID, subject,
		FieldActor, actor,
		FieldData, data,
		FieldSource, ev.Source,
		FieldSpecVersion, ev.SpecVersion,
	)
	if ev.DataContentType != "" {
		out = append(out, FieldDataContentType, ev.DataContentType)
	}
	if ev.DataSchema != "" {
		out = append(out, FieldDataSchema, ev.DataSchema)
	}
	if enc != "" {
		out = append(out, FieldDataEncoding, enc)
	}
	if len(ev.Extensions) > 0 {
		for _, name := range sortedExtNames(ev.Extensions, true) {
			s, _ := FormatValue(ev.Extensions[name]) // validate checked the type
			out = append(out, name, s)
		}
	}
	if types := typeList(ev.Extensions); types != "" {
		out = append(out, FieldTypes, types)
	}
	if list := filled.String(); list != "" {
		out = append(out, FieldDefaulted, list)
	}
	return out, nil
}

// encodeData returns the data field and the data_encoding marker ("" for JSON data).
func encodeData(ct string, data []byte) (string, string) {
	if len(data) == 0 {
		return "", ""
	}
	if IsJSON(ct) {
		return string(data), ""
	}
	if isText(ct) && utf8.Valid(data) {
		return string(appendJSONString(make([]byte, 0, len(data)+2), string(data))), DataEncodingText
	}
	b := make([]byte, 0, base64.StdEncoding.EncodedLen(len(data))+2)
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, data)
	b = append(b, '"')
	return string(b), DataEncodingBase64
}

// Presence bits of the seven mandatory R2 fields.
const (
	hasType = 1 << iota
	hasEventID
	hasOccurredAt
	hasTenantID
	hasSubjectID
	hasActor
	hasData
	hasAll = 1<<7 - 1
)

var mandatory = [...]struct {
	bit  int
	name string
}{
	{hasType, FieldType}, {hasEventID, FieldEventID}, {hasOccurredAt, FieldOccurredAt},
	{hasTenantID, FieldTenantID}, {hasSubjectID, FieldSubjectID}, {hasActor, FieldActor}, {hasData, FieldData},
}

// DecodeFields rebuilds an event from R2 fields (an XMessage's values, see
// FieldsFromAny). All seven R2 fields are mandatory (N2): each missing one is a
// problem naming it, and so is each empty one, since R2 has no "unset" value (entries
// written by older versions of the hub carry empty actor, subject_id, occurred_at or
// data: AllowEmptyFields accepts them as unset). The fields ce_defaulted names are
// wire defaults and are dropped, which gives back the event EncodeFieldsWith was
// given. A missing source field means defaultSource (hand-written entries as in R2
// have none); other fields whose names are legal extension names become string
// extensions, typed by ce_types; fields with other names are ignored. The result is
// validated; the error is a *ValidationError whose fields use R2 names.
func DecodeFields(values map[string]string, defaultSource string, opts ...FieldsOption) (*Event, error) {
	var o fieldsOptions
	for _, opt := range opts {
		opt(&o)
	}
	var p problems
	ev := &Event{SpecVersion: SpecVersion, Source: defaultSource}
	var seen, empty int
	var occurred, tenant, actor, data, enc, types, filled string
	for k, v := range values {
		bit := 0
		switch k {
		case FieldType:
			bit = hasType
			ev.Type = v
		case FieldEventID:
			bit = hasEventID
			ev.ID = v
		case FieldOccurredAt:
			bit = hasOccurredAt
			occurred = v
		case FieldTenantID:
			bit = hasTenantID
			tenant = v
		case FieldSubjectID:
			bit = hasSubjectID
			ev.Subject = v
		case FieldActor:
			bit = hasActor
			actor = v
		case FieldData:
			bit = hasData
			data = v
		case FieldSource:
			if v != "" {
				ev.Source = v
			}
		case FieldSpecVersion:
			ev.SpecVersion = v
		case FieldDataContentType:
			ev.DataContentType = v
		case FieldDataSchema:
			ev.DataSchema = v
		case FieldDataEncoding:
			enc = v
		case FieldTypes:
			types = v
		case FieldDefaulted:
			filled = v
		default:
			if v != "" && ValidName(k) && !reservedName(k) { // "" is never written: no value
				if ev.Extensions == nil {
					ev.Extensions = make(map[string]any, len(values)-r2Fields+2)
				}
				ev.Extensions[k] = v
			}
		}
		seen |= bit
		if v == "" {
			empty |= bit
		}
	}
	if seen != hasAll || (empty != 0 && !o.allowEmpty) {
		for _, m := range mandatory {
			switch {
			case seen&m.bit == 0:
				p.add(m.name, "missing (R2 requires this field)")
			case empty&m.bit != 0 && !o.allowEmpty:
				p.add(m.name, "empty (R2 requires a value)")
			}
		}
	}
	if filled != "" {
		drop := parseDefaulted(filled, &p)
		if drop&hasOccurredAt != 0 {
			occurred = ""
		}
		if drop&hasSubjectID != 0 {
			ev.Subject = ""
		}
		if drop&hasActor != 0 {
			actor = ""
		}
		if drop&hasData != 0 {
			data = ""
		}
	}
	if occurred != "" {
		t, err := parseUTCTime(occurred)
		if err != nil {
			p.add(FieldOccurredAt, err.Error())
		}
		ev.Time = t
	}
	if tenant != "" || actor != "" {
		if ev.Extensions == nil {
			ev.Extensions = make(map[string]any, 2)
		}
		if tenant != "" {
			ev.Extensions[ExtTenantID] = tenant
		}
		if actor != "" {
			ev.Extensions[ExtActor] = actor
		}
	}
	decodeData(ev, data, enc, &p)
	if types != "" {
		applyTypeList(ev.Extensions, types, FieldTypes, &p)
	}
	before := len(p.list)
	ev.check(&p, enc != "") // decodeData checked JSON data already
	renameToR2(&p, before)
	if err := p.err(); err != nil {
		return nil, err
	}
	return ev, nil
}

func decodeData(ev *Event, data, enc string, p *problems) {
	if data == "" {
		if enc != "" && enc != DataEncodingText && enc != DataEncodingBase64 {
			p.add(FieldDataEncoding, "unknown encoding "+enc)
		}
		return
	}
	switch enc {
	case "":
		if !json.Valid([]byte(data)) {
			p.add(FieldData, "not valid JSON (R2: data is JSON-encoded)")
			return
		}
		ev.Data = []byte(data)
	case DataEncodingText:
		s, ok := unquoteJSONString([]byte(data))
		if !ok {
			p.add(FieldData, "data_encoding text: not a JSON string")
			return
		}
		ev.Data = []byte(s)
	case DataEncodingBase64:
		s, ok := unquoteJSONString([]byte(data))
		if !ok {
			p.add(FieldData, "data_encoding base64: not a JSON string")
			return
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			p.add(FieldData, "data_encoding base64: not base64")
			return
		}
		ev.Data = b
	default:
		p.add(FieldDataEncoding, "unknown encoding "+enc)
	}
	if len(ev.Data) == 0 {
		ev.Data = nil
	}
}

// r2Names are the R2 names of the CloudEvents attributes R2 renames.
var r2Names = map[string]string{"id": FieldEventID, "time": FieldOccurredAt, "subject": FieldSubjectID, ExtTenantID: FieldTenantID}

// renameToR2 renames the problems from index from on to R2 field names and drops
// those already reported for the same field (a missing field is also "required").
func renameToR2(p *problems, from int) { renameProblems(p, from, r2Names) }

// renameProblems renames the problems from index from on by names and drops those
// already reported (before from) for the same field.
func renameProblems(p *problems, from int, names map[string]string) {
	kept := p.list[:from]
	for _, q := range p.list[from:] {
		if n, ok := names[q.Field]; ok {
			q.Field = n
		}
		dup := false
		for _, r := range kept[:from] {
			if r.Field == q.Field {
				dup = true
				break
			}
		}
		if !dup {
			kept = append(kept, q)
		}
	}
	p.list = kept
}

// FieldsFromAny converts go-redis XMessage.Values (map[string]interface{}) to the
// string map DecodeFields takes. Redis returns strings; anything else is formatted.
func FieldsFromAny(values map[string]any) map[string]string {
	out := make(map[string]string, len(values))
	for k, v := range values {
		switch x := v.(type) {
		case string:
			out[k] = x
		case []byte:
			out[k] = string(x)
		case nil:
			out[k] = ""
		default:
			out[k] = fmt.Sprint(x)
		}
	}
	return out
}
