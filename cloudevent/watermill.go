package cloudevent

import (
	"errors"
	"strings"

	"github.com/ThreeDotsLabs/watermill/message"
)

// Watermill metadata keys. Attributes and extensions go under MetaPrefix + their
// CloudEvents name (the Kafka binding's convention), values in canonical string form;
// the message UUID is the event id and the payload is the data. Other metadata (set by
// Watermill middleware, e.g. correlation_id or the poison queue's reason_poisoned) is
// left alone by FromMessage.
const (
	MetaPrefix = "ce_"
	// MetaExtTypes lists the non-string extensions, as HeaderExtTypes does for HTTP. A
	// key that "ce_"+name cannot produce, so no extension can collide with it.
	MetaExtTypes = "eventhub_ext_types"
)

// ToMessage turns ev into a Watermill message losslessly: FromMessage gives back an
// event equal to ev. The payload is ev.Data itself, not a copy.
func ToMessage(ev *Event) (*message.Message, error) {
	if ev == nil {
		return nil, errors.New("cloudevent: ToMessage: nil event")
	}
	msg := message.NewMessage(ev.ID, ev.Data)
	md := make(message.Metadata, 8+len(ev.Extensions))
	md[MetaPrefix+"specversion"] = ev.SpecVersion
	md[MetaPrefix+"source"] = ev.Source
	md[MetaPrefix+"type"] = ev.Type
	if ev.DataContentType != "" {
		md[MetaPrefix+"datacontenttype"] = ev.DataContentType
	}
	if ev.DataSchema != "" {
		md[MetaPrefix+"dataschema"] = ev.DataSchema
	}
	if ev.Subject != "" {
		md[MetaPrefix+"subject"] = ev.Subject
	}
	if !ev.Time.IsZero() {
		md[MetaPrefix+"time"] = formatTime(ev.Time)
	}
	for name, v := range ev.Extensions {
		if !ValidName(name) || reservedName(name) {
			return nil, errors.New("cloudevent: ToMessage: illegal extension name " + name)
		}
		s, ok := FormatValue(v)
		if !ok {
			return nil, errors.New("cloudevent: ToMessage: extension " + name + " has an unsupported type")
		}
		md[MetaPrefix+name] = s
	}
	if types := typeList(ev.Extensions); types != "" {
		md[MetaExtTypes] = types
	}
	msg.Metadata = md
	return msg, nil
}

// FromMessage rebuilds and validates the event carried by msg (see ToMessage). The
// event's Data is msg.Payload itself.
func FromMessage(msg *message.Message) (*Event, error) {
	if msg == nil {
		return nil, errors.New("cloudevent: FromMessage: nil message")
	}
	var p problems
	ev := &Event{ID: msg.UUID}
	if len(msg.Payload) > 0 {
		ev.Data = msg.Payload
	}
	for k, v := range msg.Metadata {
		name, ok := strings.CutPrefix(k, MetaPrefix)
		if !ok {
			continue
		}
		switch name {
		case "specversion":
			ev.SpecVersion = v
		case "id": // the UUID is authoritative
		case "source":
			ev.Source = v
		case "type":
			ev.Type = v
		case "datacontenttype":
			ev.DataContentType = v
		case "dataschema":
			ev.DataSchema = v
		case "subject":
			ev.Subject = v
		case "time":
			t, err := parseTime(v)
			if err != nil {
				p.add("time", err.Error())
			}
			ev.Time = t
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
	if types := msg.Metadata[MetaExtTypes]; types != "" {
		applyTypeList(ev.Extensions, types, MetaExtTypes, &p)
	}
	ev.validate(&p)
	if err := p.err(); err != nil {
		return nil, err
	}
	return ev, nil
}
