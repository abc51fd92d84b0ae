package cloudevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strings"
)

// The seed 001 envelope (E1) and its mapping to CloudEvents:
//
//	E1 field            CloudEvent
//	event_id            id
//	event_type          type
//	timestamp           time (RFC 3339; written with nanoseconds in UTC)
//	source              source
//	correlation_id      extension correlationid (E4)
//	version             extension dataversion (E5)
//	data                data (JSON only; datacontenttype application/json)
//	metadata.ip         extension ip
//	metadata.user_agent extension useragent
//	metadata.request_id extension requestid
//	metadata.tenant_id  extension tenantid (also accepted: a top-level tenant_id, or
//	                    the default given by WithEnvelopeTenant)
//	metadata.subject    subject
//	metadata.dataschema dataschema
//	metadata.datacontenttype  datacontenttype when it is not application/json
//	metadata.<other>    extension named <other> without "_" and "-", lowercased; it
//	                    must then obey ^[a-z0-9]{1,20}$ or the envelope is rejected
//
// Every other extension goes out as metadata under its own name. Metadata values are
// strings, booleans or integers (int32); other extension types go out as their
// canonical strings and come back as strings (as in structured JSON). E1 data is
// re-compacted by encoding/json: equal as JSON, not byte for byte.

var e1ToExt = map[string]string{
	"user_agent": "useragent",
	"request_id": "requestid",
	"tenant_id":  ExtTenantID,
}

var extToE1 = map[string]string{
	"useragent": "user_agent",
	"requestid": "request_id",
	ExtTenantID: "tenant_id",
}

type envelope struct {
	EventID       string          `json:"event_id"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	EventType     string          `json:"event_type"`
	Version       string          `json:"version,omitempty"`
	Timestamp     string          `json:"timestamp,omitempty"`
	Source        string          `json:"source,omitempty"`
	TenantID      string          `json:"tenant_id,omitempty"`
	Data          json.RawMessage `json:"data,omitempty"`
	Metadata      map[string]any  `json:"metadata,omitempty"`
}

// ToEnvelope writes ev as a seed 001 envelope (E1). Data must be JSON.
func ToEnvelope(ev *Event) ([]byte, error) {
	if ev == nil {
		return nil, errors.New("cloudevent: ToEnvelope: nil event")
	}
	env := envelope{EventID: ev.ID, EventType: ev.Type, Source: ev.Source}
	if !ev.Time.IsZero() {
		env.Timestamp = formatTime(ev.Time)
	}
	if len(ev.Data) > 0 {
		if !IsJSON(ev.DataContentType) {
			return nil, errors.New("cloudevent: ToEnvelope: E1 carries JSON data only, not " + ev.DataContentType)
		}
		env.Data = ev.Data
	}
	md, err := envelopeMetadata(ev, &env.CorrelationID, &env.Version)
	if err != nil {
		return nil, err
	}
	if ct := ev.DataContentType; ct != "" && ct != ContentTypeJSON {
		md["datacontenttype"] = ct
	}
	if len(md) > 0 {
		env.Metadata = md
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// envelopeMetadata maps ev's subject, dataschema and extensions to E1 metadata (see the
// table above), except correlationid and dataversion when they are strings: those go
// to *corr and *version, E1's own fields. datacontenttype is the caller's: the JSON
// envelope leaves application/json implicit, the stream fields do not.
func envelopeMetadata(ev *Event, corr, version *string) (map[string]any, error) {
	md := make(map[string]any, len(ev.Extensions)+2)
	if ev.Subject != "" {
		md["subject"] = ev.Subject
	}
	if ev.DataSchema != "" {
		md["dataschema"] = ev.DataSchema
	}
	for name, v := range ev.Extensions {
		switch name {
		case ExtCorrelationID:
			if s, ok := v.(string); ok {
				*corr = s
				continue
			}
		case ExtDataVersion:
			if s, ok := v.(string); ok {
				*version = s
				continue
			}
		}
		key := name
		if k, ok := extToE1[name]; ok {
			key = k
		}
		switch x := v.(type) {
		case string, bool, int32:
			md[key] = x
		default:
			s, ok := FormatValue(v)
			if !ok {
				return nil, errors.New("cloudevent: ToEnvelope: extension " + name + " has an unsupported type")
			}
			md[key] = s
		}
	}
	return md, nil
}

// EnvelopeOption adjusts FromEnvelope.
type EnvelopeOption func(*envelopeOptions)

type envelopeOptions struct{ tenant, source string }

// WithEnvelopeTenant sets the tenantid for envelopes that carry none (seed 001's
// envelope has no tenant field; C1 requires one).
func WithEnvelopeTenant(tenant string) EnvelopeOption {
	return func(o *envelopeOptions) { o.tenant = tenant }
}

// WithEnvelopeSource sets the source for envelopes that carry none.
func WithEnvelopeSource(source string) EnvelopeOption {
	return func(o *envelopeOptions) { o.source = source }
}

// FromEnvelope reads a seed 001 envelope (E1) into a validated CloudEvent (see the
// mapping above). The error is a *ValidationError listing every problem.
func FromEnvelope(b []byte, opts ...EnvelopeOption) (*Event, error) {
	var o envelopeOptions
	for _, opt := range opts {
		opt(&o)
	}
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		return nil, &ValidationError{Problems: []Problem{{"", "not an E1 envelope: " + err.Error()}}}
	}
	var p problems
	ev := &Event{
		ID: env.EventID, Type: env.EventType, Source: env.Source, SpecVersion: SpecVersion,
		DataContentType: ContentTypeJSON,
	}
	if ev.Source == "" {
		ev.Source = o.source
	}
	if env.Timestamp != "" {
		t, err := parseUTCTime(env.Timestamp)
		if err != nil {
			p.add("timestamp", err.Error())
		}
		ev.Time = t
	}
	if len(env.Data) > 0 && !isNull(env.Data) {
		ev.Data = []byte(env.Data)
	}
	ev.Extensions = make(map[string]any, len(env.Metadata)+3)
	setExt := func(name string, v any) {
		if s, ok := v.(string); ok && s == "" {
			return
		}
		ev.Extensions[name] = v
	}
	setExt(ExtCorrelationID, env.CorrelationID)
	setExt(ExtDataVersion, env.Version)
	setExt(ExtTenantID, o.tenant)
	setExt(ExtTenantID, env.TenantID)
	applyMetadata(ev, env.Metadata, setExt, &p)
	ev.validate(&p)
	if err := p.err(); err != nil {
		return nil, err
	}
	return ev, nil
}

// applyMetadata maps E1 metadata onto ev (subject, dataschema, datacontenttype and
// extensions, see the table above), through setExt for extensions, adding a problem
// for each key or value the mapping refuses. Keys are visited in sorted order, so the
// problems come out in a stable order.
func applyMetadata(ev *Event, md map[string]any, setExt func(string, any), p *problems) {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, msg := metadataValue(md[k])
		if msg != "" {
			p.add("metadata."+k, msg)
			continue
		}
		switch k {
		case "subject", "dataschema", "datacontenttype":
			s, ok := v.(string)
			if !ok {
				p.add("metadata."+k, "must be a string")
				continue
			}
			switch k {
			case "subject":
				ev.Subject = s
			case "dataschema":
				ev.DataSchema = s
			default:
				ev.DataContentType = s
			}
			continue
		}
		name, ok := e1ToExt[k]
		if !ok {
			name = strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(k))
		}
		if !ValidName(name) || reservedName(name) {
			p.add("metadata."+k, "cannot be an extension: "+name+" does not match ^[a-z0-9]{1,20}$ or is a core attribute")
			continue
		}
		setExt(name, v)
	}
}

func metadataValue(v any) (any, string) {
	switch x := v.(type) {
	case string, bool:
		return x, ""
	case json.Number:
		if n, err := x.Int64(); err == nil && n >= math.MinInt32 && n <= math.MaxInt32 {
			return int32(n), ""
		}
		return nil, "number is not an integer in the 32-bit range"
	case nil:
		return "", ""
	}
	return nil, "must be a string, boolean or integer"
}
