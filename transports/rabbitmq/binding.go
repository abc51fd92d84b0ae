package rabbitmq

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// The CloudEvents binding for AMQP 0-9-1.
//
// CloudEvents only defines an AMQP 1.0 binding; RabbitMQ's native protocol is 0-9-1.
// This is its closest mirror: in binary mode every attribute except datacontenttype is
// a message header named `cloudEvents:<attribute>` (the 1.0 binding's application
// property prefix), datacontenttype is the content-type property and the body is the
// data, untouched. Extension values keep their CloudEvents type through the matching
// AMQP field-table type (boolean, signed 32-bit int, long string, byte array,
// timestamp), so a plain AMQP client sees typed values and our decoder restores them.
// Two CloudEvents types have no AMQP counterpart and one is lossy: URI, URI-reference
// and timestamps with sub-second digits (AMQP timestamps are whole seconds) travel as
// strings and are named in the `eventhub-ce-types` header, which other clients ignore.
//
// It lives here, not in cloudevent/, because it depends on amqp091-go's table types and
// only on cloudevent's public API.

const (
	ceHeaderPrefix    = "cloudEvents:"
	ceHeaderPrefixAlt = "cloudEvents_" // accepted on decode, as the binding's draft allows
	typesHeader       = "eventhub-ce-types"
	publishedHeader   = "eventhub-published-ms" // publish time in ms, for event_lag_seconds
	structuredType    = "application/cloudevents+json"

	// type hints use cloudevent.Kind names
	typeURI       = "uri"
	typeURIRef    = "urireference"
	typeTimestamp = "timestamp"
)

// encode builds the AMQP message for ev in the given mode. Routing key = ev.Type.
func encode(ev *cloudevent.Event, mode string, now time.Time) (amqp.Publishing, error) {
	if ev == nil {
		return amqp.Publishing{}, hub.Errorf(hub.InvalidArgument, "rabbitmq: nil event")
	}
	p := amqp.Publishing{
		DeliveryMode: amqp.Persistent,
		MessageId:    ev.ID,   // for AMQP tooling and dedupe plugins; the header is authoritative
		Type:         ev.Type, // same
		Headers:      amqp.Table{publishedHeader: now.UnixMilli()},
	}
	if !ev.Time.IsZero() && ev.Time.Unix() >= 0 {
		p.Timestamp = ev.Time.UTC()
	}
	if mode == ModeStructured {
		body, err := marshalStructured(ev)
		if err != nil {
			return amqp.Publishing{}, hub.Wrap(hub.InvalidArgument, err)
		}
		p.ContentType = structuredType
		p.Body = body
		// JSON flattens URI, URIRef, Timestamp and Binary extensions to strings; the
		// hint header lets our decoder restore them (other clients read the strings).
		var hints []string
		for name, v := range ev.Extensions {
			switch k := cloudevent.KindOf(v); k {
			case cloudevent.KindURI, cloudevent.KindURIRef, cloudevent.KindTimestamp, cloudevent.KindBinary:
				hints = append(hints, name+"="+k.String())
			}
		}
		if len(hints) > 0 {
			sort.Strings(hints)
			p.Headers[typesHeader] = strings.Join(hints, ",")
		}
		return p, nil
	}
	h := p.Headers
	h[ceHeaderPrefix+"specversion"] = orDefault(ev.SpecVersion, cloudevent.SpecVersion)
	h[ceHeaderPrefix+"id"] = ev.ID
	h[ceHeaderPrefix+"source"] = ev.Source
	h[ceHeaderPrefix+"type"] = ev.Type
	if ev.Subject != "" {
		h[ceHeaderPrefix+"subject"] = ev.Subject
	}
	if ev.DataSchema != "" {
		h[ceHeaderPrefix+"dataschema"] = ev.DataSchema
	}
	if !ev.Time.IsZero() {
		h[ceHeaderPrefix+"time"] = ev.Time.UTC().Format(time.RFC3339Nano)
	}
	var hints []string
	for name, v := range ev.Extensions {
		key := ceHeaderPrefix + name
		switch x := v.(type) {
		case string:
			h[key] = x
		case bool:
			h[key] = x
		case int32:
			h[key] = x
		case []byte:
			h[key] = x
		case cloudevent.URI:
			h[key] = string(x)
			hints = append(hints, name+"="+typeURI)
		case cloudevent.URIRef:
			h[key] = string(x)
			hints = append(hints, name+"="+typeURIRef)
		case time.Time:
			if x.Nanosecond() == 0 && x.Unix() >= 0 {
				h[key] = x.UTC()
			} else {
				h[key] = x.UTC().Format(time.RFC3339Nano)
				hints = append(hints, name+"="+typeTimestamp)
			}
		default:
			return amqp.Publishing{}, hub.Errorf(hub.InvalidArgument, "rabbitmq: event %s: extension %q has unsupported type %T", ev.ID, name, v)
		}
	}
	if len(hints) > 0 {
		sort.Strings(hints)
		h[typesHeader] = strings.Join(hints, ",")
	}
	p.ContentType = ev.DataContentType
	p.Body = ev.Data
	return p, nil
}

// decode rebuilds the event from a delivery. Headers it does not own (x-death,
// x-delivery-count, x-first-death-*, anything a client added) are ignored whatever
// their type, so broker bookkeeping never makes a message unreadable. A message that is
// not a CloudEvent returns a *MalformedError listing every problem.
func decode(d *amqp.Delivery) (*cloudevent.Event, error) {
	if isStructured(d.ContentType) {
		ev, err := unmarshalStructured(d.Body)
		if err != nil {
			return nil, &MalformedError{Problems: []string{err.Error()}}
		}
		for name, kind := range parseHints(d.Headers[typesHeader]) {
			if s, ok := ev.Extensions[name].(string); ok {
				if v, err := cloudevent.ParseValue(kindByName[kind], s); err == nil {
					ev.Extensions[name] = v
				}
			}
		}
		return ev, nil
	}
	ev := &cloudevent.Event{DataContentType: d.ContentType}
	if len(d.Body) > 0 {
		ev.Data = d.Body
	}
	hints := parseHints(d.Headers[typesHeader])
	var problems []string
	for key, v := range d.Headers {
		name, ok := strings.CutPrefix(key, ceHeaderPrefix)
		if !ok {
			if name, ok = strings.CutPrefix(key, ceHeaderPrefixAlt); !ok {
				continue
			}
		}
		switch name {
		case "specversion", "id", "source", "type", "subject", "dataschema", "datacontenttype":
			s, ok := v.(string)
			if !ok {
				problems = append(problems, fmt.Sprintf("header %s: want a string, got %T", key, v))
				continue
			}
			setContext(ev, name, s)
		case "time":
			t, err := asTime(v)
			if err != nil {
				problems = append(problems, fmt.Sprintf("header %s: %v", key, err))
				continue
			}
			ev.Time = t
		default:
			x, err := extensionValue(v, hints[name])
			if err != nil {
				problems = append(problems, fmt.Sprintf("header %s: %v", key, err))
				continue
			}
			ev.SetExtension(name, x)
		}
	}
	if ev.SpecVersion == "" {
		problems = append(problems, "missing "+ceHeaderPrefix+"specversion")
	} else if ev.SpecVersion != cloudevent.SpecVersion {
		problems = append(problems, fmt.Sprintf("specversion %q, want %s", ev.SpecVersion, cloudevent.SpecVersion))
	}
	for name, v := range map[string]string{"id": ev.ID, "source": ev.Source, "type": ev.Type} {
		if v == "" {
			problems = append(problems, "missing "+ceHeaderPrefix+name)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, &MalformedError{Problems: problems}
	}
	return ev, nil
}

func setContext(ev *cloudevent.Event, name, s string) {
	switch name {
	case "specversion":
		ev.SpecVersion = s
	case "id":
		ev.ID = s
	case "source":
		ev.Source = s
	case "type":
		ev.Type = s
	case "subject":
		ev.Subject = s
	case "dataschema":
		ev.DataSchema = s
	case "datacontenttype":
		if ev.DataContentType == "" { // the content-type property wins
			ev.DataContentType = s
		}
	}
}

var kindByName = map[string]cloudevent.Kind{
	typeURI: cloudevent.KindURI, typeURIRef: cloudevent.KindURIRef, typeTimestamp: cloudevent.KindTimestamp,
	cloudevent.KindBinary.String(): cloudevent.KindBinary,
}

func parseHints(v any) map[string]string {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, t, ok := strings.Cut(kv, "="); ok {
			m[k] = t
		}
	}
	return m
}

// extensionValue maps an AMQP field value to a CloudEvents extension value. Other
// clients may send integers of any width or floats; integers that fit become int32
// (the CloudEvents Integer), everything else its canonical string form.
func extensionValue(v any, hint string) (any, error) {
	switch hint {
	case typeURI, typeURIRef:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a string for a %s, got %T", hint, v)
		}
		if hint == typeURI {
			return cloudevent.URI(s), nil
		}
		return cloudevent.URIRef(s), nil
	case typeTimestamp:
		return asTime(v)
	}
	switch x := v.(type) {
	case string, bool, int32:
		return x, nil
	case []byte:
		return x, nil
	case time.Time:
		return x.UTC(), nil
	case int8:
		return int32(x), nil
	case uint8:
		return int32(x), nil
	case int16:
		return int32(x), nil
	case uint16:
		return int32(x), nil
	case int64:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return int32(x), nil
		}
		return strconv.FormatInt(x, 10), nil
	case int:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return int32(x), nil
		}
		return strconv.Itoa(x), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case amqp.Decimal:
		return fmt.Sprintf("%de-%d", x.Value, x.Scale), nil
	case nil:
		return nil, fmt.Errorf("void value")
	}
	return nil, fmt.Errorf("unsupported AMQP type %T", v)
}

func asTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x.UTC(), nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return time.Time{}, fmt.Errorf("not an RFC 3339 timestamp: %q", x)
		}
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("want a timestamp, got %T", v)
}

func isStructured(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), structuredType)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// MalformedError says a message is not a readable CloudEvent. Such messages go to the
// dead-letter queue at once (reason "malformed"): redelivery cannot repair them.
type MalformedError struct {
	Problems []string
}

func (e *MalformedError) Error() string {
	return "rabbitmq: malformed CloudEvent: " + strings.Join(e.Problems, "; ")
}

// HubCode classifies the error as InvalidArgument (hub.Coder).
func (e *MalformedError) HubCode() int { return int(hub.InvalidArgument) }
