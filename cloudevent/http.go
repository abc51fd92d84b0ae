package cloudevent

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// HTTPMode selects how ToHTTP lays an event out (CloudEvents HTTP binding §3).
type HTTPMode int

const (
	// HTTPBinary puts the data in the body as is, Content-Type = datacontenttype, and
	// every other attribute in a ce-<name> header. The default for webhooks: receivers
	// that know nothing of CloudEvents still get the plain payload.
	HTTPBinary HTTPMode = iota
	// HTTPStructured sends the whole event as application/cloudevents+json.
	HTTPStructured
)

// HeaderExtTypes carries the type list of non-string extensions (the ce_types scheme
// of the R2 codec: "name:type,...") so that FromHTTP restores typed values that HTTP
// headers and the JSON format would turn into strings. It is deliberately not a ce-
// header: other CloudEvents SDKs would read one as an extension.
const HeaderExtTypes = "Eventhub-Ext-Types"

// DefaultMaxBodyBytes is FromHTTPRequest's limit when the caller passes 0. CloudEvents
// asks consumers to accept at least 64 KiB; 1 MiB leaves room for batches.
const DefaultMaxBodyBytes = 1 << 20

// ToHTTP returns the headers and body of an HTTP request (or response) carrying ev.
// Header values are percent-encoded as the HTTP binding §3.1.3.2 requires (space, ",
// % and everything outside U+0021-U+007E, as UTF-8 bytes), which cloudevents/sdk-go
// does not do. In binary mode the body is ev.Data itself, not a copy; an event whose
// datacontenttype is itself a CloudEvents format goes out in structured mode.
func ToHTTP(ev *Event, mode HTTPMode) (http.Header, []byte, error) {
	if ev == nil {
		return nil, nil, errors.New("cloudevent: ToHTTP: nil event")
	}
	types := typeList(ev.Extensions)
	if mode == HTTPBinary && strings.HasPrefix(mediaType(ev.DataContentType), "application/cloudevents") {
		// Data that is itself in a CloudEvents format would be read back as a
		// structured event; only structured mode can carry it.
		mode = HTTPStructured
	}
	switch mode {
	case HTTPStructured:
		body, err := ev.MarshalJSON()
		if err != nil {
			return nil, nil, err
		}
		h := http.Header{"Content-Type": {ContentTypeStructured}}
		if types != "" {
			h[HeaderExtTypes] = []string{types}
		}
		return h, body, nil
	case HTTPBinary:
	default:
		return nil, nil, errors.New("cloudevent: ToHTTP: unknown HTTPMode")
	}
	h := make(http.Header, 8+len(ev.Extensions))
	h["Ce-Specversion"] = []string{encodeHeaderValue(ev.SpecVersion)}
	h["Ce-Id"] = []string{encodeHeaderValue(ev.ID)}
	h["Ce-Source"] = []string{encodeHeaderValue(ev.Source)}
	h["Ce-Type"] = []string{encodeHeaderValue(ev.Type)}
	if ev.Subject != "" {
		h["Ce-Subject"] = []string{encodeHeaderValue(ev.Subject)}
	}
	if ev.DataSchema != "" {
		h["Ce-Dataschema"] = []string{encodeHeaderValue(ev.DataSchema)}
	}
	if !ev.Time.IsZero() {
		h["Ce-Time"] = []string{formatTime(ev.Time)}
	}
	if ev.DataContentType != "" {
		h["Content-Type"] = []string{ev.DataContentType}
	}
	for name, v := range ev.Extensions {
		if !ValidName(name) || reservedName(name) {
			return nil, nil, errors.New("cloudevent: ToHTTP: illegal extension name " + name)
		}
		s, ok := FormatValue(v)
		if !ok {
			return nil, nil, errors.New("cloudevent: ToHTTP: extension " + name + " has an unsupported type")
		}
		h[headerKey(name)] = []string{encodeHeaderValue(s)}
	}
	if types != "" {
		h[HeaderExtTypes] = []string{types}
	}
	return h, ev.Data, nil
}

// headerKey returns the canonical MIME form of "ce-"+name (name is [a-z0-9]), so the
// header map can be filled without textproto's canonicalisation per call.
func headerKey(name string) string {
	b := make([]byte, 0, 3+len(name))
	b = append(b, "Ce-"...)
	b = append(b, name...)
	if c := b[3]; c >= 'a' && c <= 'z' {
		b[3] = c - 'a' + 'A'
	}
	return string(b)
}

// encodeHeaderValue percent-encodes per HTTP binding §3.1.3.2.
func encodeHeaderValue(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			b = append(b, '%', hex[c>>4], hex[c&0xf])
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

func needsEscape(c byte) bool { return c <= 0x20 || c >= 0x7f || c == '"' || c == '%' }

// decodeHeaderValue undoes encodeHeaderValue: strip surrounding double quotes, one
// round of percent-decoding, and reject invalid UTF-8.
func decodeHeaderValue(s string) (string, string) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if strings.IndexByte(s, '%') < 0 {
		if !utf8.ValidString(s) {
			return "", "not valid UTF-8"
		}
		return s, ""
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
			return "", "bad percent-encoding"
		}
		b = append(b, byte(unhex(s[i+1])<<4|unhex(s[i+2])))
		i += 2
	}
	if !utf8.Valid(b) {
		return "", "not valid UTF-8 after percent-decoding"
	}
	return string(b), ""
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// FromHTTP reads the events of an HTTP message. The mode follows the Content-Type as
// the binding prescribes: application/cloudevents-batch+json is a batch,
// application/cloudevents+json one structured event, anything else binary mode (which
// needs ce- headers). Every event is validated; the error is a *ValidationError. In
// binary mode the event's Data is body itself, not a copy.
func FromHTTP(h http.Header, body []byte) ([]*Event, error) {
	ct := h.Get("Content-Type")
	mt := mediaType(ct)
	switch {
	case strings.HasPrefix(mt, "application/cloudevents-batch"):
		if mt != ContentTypeBatch {
			return nil, unsupportedFormat(mt)
		}
		return ParseBatch(body)
	case strings.HasPrefix(mt, "application/cloudevents"):
		if mt != ContentTypeStructured {
			return nil, unsupportedFormat(mt)
		}
		var p problems
		ev := new(Event)
		if object, dataValid := ev.decodeJSON(body, &p); object {
			if types := h.Get(HeaderExtTypes); types != "" {
				applyTypeList(ev.Extensions, types, HeaderExtTypes, &p)
			}
			ev.check(&p, !dataValid)
		}
		if err := p.err(); err != nil {
			return nil, err
		}
		return []*Event{ev}, nil
	}
	ev, err := fromBinary(h, ct, body)
	if err != nil {
		return nil, err
	}
	return []*Event{ev}, nil
}

func unsupportedFormat(mt string) error {
	return &ValidationError{Problems: []Problem{{"Content-Type", "unsupported event format " + mt + " (want JSON)"}}}
}

func fromBinary(h http.Header, ct string, body []byte) (*Event, error) {
	var p problems
	ev := &Event{DataContentType: ct}
	if len(body) > 0 {
		ev.Data = body
	}
	found := false
	for k, vs := range h {
		if len(k) <= 3 || len(vs) == 0 || !strings.EqualFold(k[:3], "ce-") {
			continue
		}
		found = true
		name := strings.ToLower(k[3:])
		v, msg := decodeHeaderValue(vs[0])
		if msg != "" {
			p.add(name, msg)
			continue
		}
		switch name {
		case "specversion":
			ev.SpecVersion = v
		case "id":
			ev.ID = v
		case "source":
			ev.Source = v
		case "type":
			ev.Type = v
		case "subject":
			ev.Subject = v
		case "dataschema":
			ev.DataSchema = v
		case "time":
			t, err := parseTime(v)
			if err != nil {
				p.add("time", err.Error())
			}
			ev.Time = t
		case "datacontenttype": // MUST NOT be sent in binary mode; Content-Type wins
		default:
			if v == "" {
				continue
			}
			if ev.Extensions == nil {
				ev.Extensions = make(map[string]any, 8)
			}
			ev.Extensions[name] = v
		}
	}
	if !found {
		p.add("", "not a CloudEvent: no ce- headers and Content-Type "+strings.TrimSpace(ct)+" is not a CloudEvents format")
		return nil, p.err()
	}
	if types := h.Get(HeaderExtTypes); types != "" {
		applyTypeList(ev.Extensions, types, HeaderExtTypes, &p)
	}
	ev.validate(&p)
	if err := p.err(); err != nil {
		return nil, err
	}
	return ev, nil
}

// FromHTTPRequest reads at most maxBytes of r's body (DefaultMaxBodyBytes when 0) and
// parses it with FromHTTP. A larger body gives a *TooLargeError (errors.Is
// ErrTooLarge) that an ingress answers with 413, without reading the rest.
func FromHTTPRequest(r *http.Request, maxBytes int64) ([]*Event, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBodyBytes
	}
	if r.ContentLength > maxBytes {
		return nil, &TooLargeError{Limit: maxBytes}
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, maxBytes+1))
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &TooLargeError{Limit: mbe.Limit}
		}
		if err != nil {
			return nil, err
		}
		if int64(len(body)) > maxBytes {
			return nil, &TooLargeError{Limit: maxBytes}
		}
	}
	return FromHTTP(r.Header, body)
}
