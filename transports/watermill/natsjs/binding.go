package natsjs

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/watermill"
)

// Headers of the CloudEvents NATS protocol binding (1.0.1) and the hub's additions.
const (
	// HeaderPrefix starts every attribute and extension header in binary mode ("ce-id").
	HeaderPrefix = "ce-"
	// HeaderContentType carries datacontenttype in binary mode, and
	// application/cloudevents+json in structured mode.
	HeaderContentType = "content-type"
	// HeaderExtTypes lists the non-string extension types, as the HTTP binding's
	// Eventhub-Ext-Types does: other readers see the extensions as strings.
	HeaderExtTypes = "Eventhub-Ext-Types"
	// HeaderEncoded names the headers whose values are percent-encoded because they
	// cannot travel raw in a NATS header (a line break, a control character, leading or
	// trailing blanks, invalid UTF-8). Values that can travel raw always do, so other
	// readers see them unchanged.
	HeaderEncoded = "Eventhub-Encoded"
)

// Marshaler writes Watermill messages as the CloudEvents NATS binding and reads them
// back; it is the watermill-nats Marshaler and Unmarshaler of this package's publisher
// and subscriber. It implements wmnats.MarshalerUnmarshaler.
//
// Binary mode (the message carries cloudevent's "ce_" metadata): the data is the NATS
// payload, "ce_datacontenttype" becomes the content-type header, every other "ce_<name>"
// the header "ce-<name>", the message UUID ce-id. Structured mode (content-type
// application/cloudevents+json): the payload is the event and content-type says so.
// Other metadata travels under its own name. Nats-Msg-Id is always the message UUID,
// so JetStream drops a re-sent duplicate within the stream's duplicate window.
//
// On read, JetStream's delivery count becomes watermill.MetaDeliveries, so the
// consumer dead-letters by the server's count.
type Marshaler struct{}

// Marshal implements wmnats.Marshaler.
//
// It runs once per published message, so it builds the headers with few allocations:
// the header names of the context attributes are precomputed (headerNames), and the
// header values share one backing array.
func (Marshaler) Marshal(subject string, msg *message.Message) (*nats.Msg, error) {
	n := len(msg.Metadata) + 2
	h := make(nats.Header, n+1)
	values := make([]string, 0, n)
	var encoded []string
	set := func(key, value string) {
		v, enc := encodeValue(value)
		if enc {
			encoded = append(encoded, key)
		}
		values = append(values, v)
		h[key] = values[len(values)-1 : len(values) : len(values)]
	}
	binary := msg.Metadata.Get(cloudevent.MetaPrefix+"specversion") != ""
	for k, v := range msg.Metadata {
		key, known := headerNames[k]
		switch {
		case known:
		case strings.HasPrefix(k, cloudevent.MetaPrefix):
			key = HeaderPrefix + k[len(cloudevent.MetaPrefix):]
		case k == watermill.MetaDeliveries:
			continue // the broker's count, never carried
		case !validKey(k):
			return nil, hub.Errorf(hub.InvalidArgument, "natsjs: metadata key %q cannot be a NATS header name", k)
		default:
			key = k
		}
		set(key, v)
	}
	if binary {
		set(headerID, msg.UUID)
	}
	if msg.UUID != "" {
		set(nats.MsgIdHdr, msg.UUID)
	}
	if len(encoded) > 0 {
		h[HeaderEncoded] = []string{strings.Join(encoded, ",")}
	}
	return &nats.Msg{Subject: subject, Data: msg.Payload, Header: h}, nil
}

// headerID is ce-id, from the message UUID in binary mode.
const headerID = HeaderPrefix + "id"

// headerNames maps the metadata keys every event has or often has to their headers
// (an extension's is built per message).
var headerNames = func() map[string]string {
	m := map[string]string{
		cloudevent.MetaPrefix + "datacontenttype": HeaderContentType,
		cloudevent.MetaExtTypes:                   HeaderExtTypes,
	}
	for _, a := range []string{"specversion", "id", "source", "type", "subject", "time", "dataschema"} {
		m[cloudevent.MetaPrefix+a] = HeaderPrefix + a
	}
	return m
}()

// Unmarshal implements wmnats.Unmarshaler. It accepts what Marshal writes and any
// producer of the NATS binding (the CloudEvents SDK's, for one): header names are
// matched without regard to case.
func (Marshaler) Unmarshal(m *nats.Msg) (*message.Message, error) {
	encoded := map[string]bool{}
	if list := m.Header.Get(HeaderEncoded); list != "" {
		for name := range strings.SplitSeq(list, ",") {
			encoded[strings.ToLower(name)] = true
		}
	}
	md := make(message.Metadata, len(m.Header))
	binary := false
	var id, msgID string
	for k, vs := range m.Header {
		if len(vs) == 0 || k == HeaderEncoded {
			continue
		}
		lower := strings.ToLower(k)
		v := vs[0]
		if encoded[lower] {
			dec, err := decodeValue(v)
			if err != nil {
				return nil, hub.Errorf(hub.InvalidArgument, "natsjs: header %s: %v", k, err)
			}
			v = dec
		}
		switch {
		case lower == HeaderPrefix+"id":
			id = v
		case strings.HasPrefix(lower, HeaderPrefix):
			name := lower[len(HeaderPrefix):]
			if name == "specversion" {
				binary = true
			}
			md[cloudevent.MetaPrefix+name] = v
		case lower == HeaderContentType:
			md[HeaderContentType] = v
		case lower == strings.ToLower(HeaderExtTypes):
			md[cloudevent.MetaExtTypes] = v
		case k == nats.MsgIdHdr:
			msgID = v
		case strings.HasPrefix(k, "Nats-"):
			// JetStream's own headers (expected stream, rollups...) are not metadata.
		default:
			md[k] = v
		}
	}
	if binary {
		// In binary mode content-type is the data's: datacontenttype.
		if ct, ok := md[HeaderContentType]; ok {
			md[cloudevent.MetaPrefix+"datacontenttype"] = ct
			delete(md, HeaderContentType)
		}
	}
	uuid := id
	if uuid == "" {
		uuid = msgID
	}
	msg := message.NewMessage(uuid, m.Data)
	msg.Metadata = md
	if meta, err := m.Metadata(); err == nil {
		md[watermill.MetaDeliveries] = strconv.FormatUint(meta.NumDelivered, 10)
	}
	return msg, nil
}

// validKey reports whether k can be a header name here: an RFC 9110 token (letters,
// digits and !#$%&'*+-.^_`|~), so it can also be listed in Eventhub-Encoded.
func validKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// encodeValue returns v, or its percent-encoded form (and true) when v cannot travel
// raw: a control character (line breaks included, which would end the header), a
// leading or trailing blank (the parser trims them) or invalid UTF-8.
func encodeValue(v string) (string, bool) {
	if !needsEncoding(v) {
		return v, false
	}
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	invalid := !utf8.ValidString(v)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c == 0x7f || c == '%' || c == ' ' || c == '\t' || c >= 0x80 && invalid {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

func needsEncoding(v string) bool {
	if v == "" {
		return false
	}
	if first, last := v[0], v[len(v)-1]; first == ' ' || first == '\t' || last == ' ' || last == '\t' {
		return true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return !utf8.ValidString(v)
}

// decodeValue reverses encodeValue.
func decodeValue(v string) (string, error) {
	b := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(v) {
			return "", errBadEscape
		}
		hi, lo := unhex(v[i+1]), unhex(v[i+2])
		if hi < 0 || lo < 0 {
			return "", errBadEscape
		}
		b = append(b, byte(hi<<4|lo))
		i += 2
	}
	return string(b), nil
}

var errBadEscape = hub.Errorf(hub.InvalidArgument, "bad percent-encoding")

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
