package cloudevent

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Media types of the CloudEvents JSON format.
const (
	ContentTypeStructured = "application/cloudevents+json"
	ContentTypeBatch      = "application/cloudevents-batch+json"
)

// MarshalJSON writes the event in the CloudEvents JSON format (structured mode).
//
// JSON data goes out as the "data" member verbatim (never re-encoded), text data of a
// text/* or XML type as a JSON string, anything else as "data_base64". Extensions are
// top-level members: int32 as a number, bool as a boolean, everything else (string,
// URI, URIRef, Timestamp in RFC 3339, Binary in base64) as a string. The format is
// therefore lossless only up to the JSON type system: ParseJSON gives back strings for
// URI, URIRef, Timestamp and Binary extensions. The flat codecs (R2, Watermill, HTTP
// via FromHTTP) keep those types.
//
// Note that json.Marshal(ev) re-compacts the output of MarshalJSON (and escapes <, >,
// & in strings), so JSON data passed through json.Marshal is equal as JSON but not
// byte for byte; call MarshalJSON or MarshalBatch directly where bytes matter.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.appendJSON(make([]byte, 0, 256+len(e.Data)+32*len(e.Extensions)))
}

func (e *Event) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"specversion":`...)
	b = appendJSONString(b, e.SpecVersion)
	b = appendMember(b, "id", e.ID)
	b = appendMember(b, "source", e.Source)
	b = appendMember(b, "type", e.Type)
	if e.DataContentType != "" {
		b = appendMember(b, "datacontenttype", e.DataContentType)
	}
	if e.DataSchema != "" {
		b = appendMember(b, "dataschema", e.DataSchema)
	}
	if e.Subject != "" {
		b = appendMember(b, "subject", e.Subject)
	}
	if !e.Time.IsZero() {
		b = append(b, `,"time":"`...)
		b = e.Time.UTC().AppendFormat(b, timeLayout)
		b = append(b, '"')
	}
	for _, name := range sortedExtNames(e.Extensions, false) {
		if !ValidName(name) || reservedName(name) {
			return nil, fmt.Errorf("cloudevent: MarshalJSON: illegal extension name %q", name)
		}
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		switch v := e.Extensions[name].(type) {
		case string:
			b = appendJSONString(b, v)
		case bool:
			b = strconv.AppendBool(b, v)
		case int32:
			b = strconv.AppendInt(b, int64(v), 10)
		default:
			s, ok := FormatValue(v)
			if !ok {
				return nil, fmt.Errorf("cloudevent: MarshalJSON: extension %s has unsupported type %T", name, v)
			}
			b = appendJSONString(b, s)
		}
	}
	if len(e.Data) > 0 {
		switch {
		case IsJSON(e.DataContentType):
			if !json.Valid(e.Data) { // would make the whole document invalid
				return nil, errors.New("cloudevent: MarshalJSON: data is not valid JSON but datacontenttype is JSON")
			}
			b = append(b, `,"data":`...)
			b = append(b, e.Data...)
		case isText(e.DataContentType) && utf8.Valid(e.Data):
			b = append(b, `,"data":`...)
			b = appendJSONString(b, string(e.Data))
		default:
			b = append(b, `,"data_base64":"`...)
			b = base64.StdEncoding.AppendEncode(b, e.Data)
			b = append(b, '"')
		}
	}
	return append(b, '}'), nil
}

const timeLayout = "2006-01-02T15:04:05.999999999Z07:00" // time.RFC3339Nano

func appendMember(b []byte, name, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendJSONString(b, value)
}

// UnmarshalJSON reads the CloudEvents JSON format. It reports members of the wrong
// JSON type (all of them) as a *ValidationError but does not validate the event:
// ParseJSON does both.
func (e *Event) UnmarshalJSON(b []byte) error {
	var p problems
	_, _ = e.decodeJSON(b, &p)
	return p.err()
}

// ParseJSON parses one structured-mode event and validates it. The error is a
// *ValidationError listing every problem.
func ParseJSON(b []byte) (*Event, error) {
	ev := new(Event)
	var p problems
	if object, dataValid := ev.decodeJSON(b, &p); object {
		ev.check(&p, !dataValid)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return ev, nil
}

// ParseBatch parses a JSON array of structured events (application/cloudevents-batch+json),
// validating each; problems are prefixed with the event's index ("[2].source").
func ParseBatch(b []byte) ([]*Event, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, &ValidationError{Problems: []Problem{{"", "not a JSON array of events: " + err.Error()}}}
	}
	evs := make([]*Event, 0, len(raws))
	var p problems
	for i, raw := range raws {
		ev, err := ParseJSON(raw)
		p.merge(indexPrefix(i), err)
		evs = append(evs, ev)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return evs, nil
}

// MarshalBatch writes events as a JSON array (application/cloudevents-batch+json).
func MarshalBatch(evs []*Event) ([]byte, error) {
	b := make([]byte, 0, 2+len(evs)*512)
	b = append(b, '[')
	for i, ev := range evs {
		if ev == nil {
			return nil, errors.New("cloudevent: MarshalBatch: nil event at index " + strconv.Itoa(i))
		}
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = ev.appendJSON(b); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// decodeJSON fills e from b, adding a problem per bad member. It reports whether b
// was a JSON object at all (validating a non-object would only add noise), and whether
// Data is known to be valid JSON already (a value inside a valid document), which
// spares validation a second scan.
//
// Hand-written on purpose: json.Valid checks the whole input once, after which a
// simple scanner slices members out without decoding into an intermediate map. That
// halves the allocations of map[string]json.RawMessage, and this runs on every
// ingress request.
func (e *Event) decodeJSON(b []byte, p *problems) (object, dataValid bool) {
	*e = Event{}
	if !json.Valid(b) {
		p.add("", "not valid JSON")
		return false, false
	}
	i := skipWS(b, 0)
	if b[i] != '{' {
		p.add("", "not a JSON object")
		return false, false
	}
	// One string copy of the document: attribute values without escapes are
	// substrings of it, which saves two allocations per member.
	src := string(b)
	var data, data64 []byte
	i++
	for {
		i = skipWS(b, i)
		if b[i] == '}' {
			break
		}
		kEnd := skipString(b, i)
		key, keyOK := unquoteJSONStr(src[i:kEnd])
		kStart := i
		i = skipWS(b, kEnd) + 1 // ':'
		i = skipWS(b, i)
		vEnd := skipValue(b, i)
		if keyOK {
			e.decodeMember(key, b[i:vEnd], src[i:vEnd], &data, &data64, p)
		} else {
			// Named as well as it can be: the bytes that are not UTF-8 shown as U+FFFD.
			p.add(strings.ToValidUTF8(src[kStart+1:kEnd-1], "\uFFFD"), "member name "+msgNotUTF8)
		}
		i = skipWS(b, vEnd)
		if b[i] == ',' {
			i++
		}
	}
	switch {
	case data != nil && data64 != nil:
		p.add("data", "both data and data_base64 are present")
	case data64 != nil:
		s, ok := unquoteJSONString(data64)
		if !ok {
			p.add("data_base64", stringProblem(string(data64)))
			break
		}
		d, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			p.add("data_base64", "not base64")
			break
		}
		if len(d) > 0 {
			e.Data = d
		}
	case data != nil:
		if IsJSON(e.DataContentType) {
			e.Data = append([]byte(nil), data...)
			dataValid = true
			break
		}
		if isNull(data) {
			break
		}
		if s, ok := unquoteJSONString(data); ok {
			if s != "" {
				e.Data = []byte(s)
			}
			break
		}
		if data[0] == '"' {
			p.add("data", msgNotUTF8)
			break
		}
		p.add("data", "must be a string when datacontenttype is not JSON")
	}
	return true, dataValid
}

func (e *Event) decodeMember(key string, raw []byte, rawStr string, data, data64 *[]byte, p *problems) {
	switch key {
	case "data":
		*data = raw
		return
	case "data_base64":
		if !isNull(raw) {
			*data64 = raw
		}
		return
	}
	if isNull(raw) { // CloudEvents JSON: null means unset
		return
	}
	var dst *string
	switch key {
	case "specversion":
		dst = &e.SpecVersion
	case "id":
		dst = &e.ID
	case "source":
		dst = &e.Source
	case "type":
		dst = &e.Type
	case "datacontenttype":
		dst = &e.DataContentType
	case "dataschema":
		dst = &e.DataSchema
	case "subject":
		dst = &e.Subject
	case "time":
		s, ok := unquoteJSONStr(rawStr)
		if !ok {
			p.add("time", stringProblem(rawStr))
			return
		}
		t, err := parseTime(s)
		if err != nil {
			p.add("time", err.Error())
			return
		}
		e.Time = t
		return
	default:
		v, msg := extValueFromJSON(rawStr)
		if msg != "" {
			p.add(key, msg)
			return
		}
		if e.Extensions == nil {
			e.Extensions = make(map[string]any, 4)
		}
		e.Extensions[key] = v
		return
	}
	s, ok := unquoteJSONStr(rawStr)
	if !ok {
		p.add(key, stringProblem(rawStr))
		return
	}
	*dst = s
}

// extValueFromJSON maps a JSON extension value into the type system: strings stay
// strings (JSON cannot tell a URI or Timestamp from a string), booleans are bool,
// numbers must be integers in the int32 range.
func extValueFromJSON(raw string) (any, string) {
	switch raw[0] {
	case '"':
		s, ok := unquoteJSONStr(raw)
		if !ok {
			return nil, msgNotUTF8 // the document is valid JSON: only the encoding can fail
		}
		return s, ""
	case 't':
		return true, ""
	case 'f':
		return false, ""
	case '{', '[':
		return nil, "extension value must be a string, number or boolean"
	}
	if n, err := strconv.ParseInt(raw, 10, 32); err == nil {
		return int32(n), ""
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return nil, "number is not an integer in the 32-bit range"
	}
	return int32(f), ""
}

func isNull(raw []byte) bool { return len(raw) == 4 && string(raw) == "null" }

var (
	_ json.Marshaler   = Event{}
	_ json.Unmarshaler = (*Event)(nil)
)
