package cloudevent

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Seed 001's envelope (E1) as stream fields: one field per envelope member, data and
// metadata as JSON text, which is how a product written against seed 001 reads
// events.user, events.session, ... The mapping to CloudEvents is ToEnvelope's (see
// envelope.go); the flat form adds what makes it lossless, in fields a seed 001
// consumer ignores:
//
//	data_encoding  as in R2, for non-JSON data (data is then a JSON string)
//	ce_types       as in R2: the CloudEvents types of non-string extensions
//	ce_defaulted   the envelope fields holding a wire default (see FieldDefaults)
//
// and, unlike the JSON envelope, it writes metadata.datacontenttype whenever the event
// has one and keeps JSON data byte for byte.
const (
	E1EventID       = "event_id"
	E1CorrelationID = "correlation_id"
	E1EventType     = "event_type"
	E1Version       = "version"
	E1Timestamp     = "timestamp"
	E1Source        = "source"
	E1Data          = "data"
	E1Metadata      = "metadata"
	// E1TenantID is also read at the top level, for entries that keep the tenant
	// beside the envelope rather than in metadata.
	E1TenantID = "tenant_id"
)

// e1Names are the E1 names of the CloudEvents attributes E1 renames.
var e1Names = map[string]string{"id": E1EventID, "type": E1EventType, "time": E1Timestamp}

// Presence bits of the E1 fields that can hold a wire default.
const (
	e1HasCorrelationID = 1 << iota
	e1HasVersion
	e1HasTimestamp
	e1HasData
)

var e1Defaultable = map[string]int{
	E1CorrelationID: e1HasCorrelationID, E1Version: e1HasVersion, E1Timestamp: e1HasTimestamp, E1Data: e1HasData,
}

// EncodeEnvelopeFields returns ev as seed 001 stream fields, in E1's order: event_id,
// correlation_id, event_type, version, timestamp, source, data, metadata, then
// data_encoding, ce_types and ce_defaulted when needed. No field is empty. An event
// without a correlation id starts a chain of its own (correlation_id = event_id, E4);
// without a dataversion it is at DefaultDataVersion; without a time it takes d.Time
// (zero: now); without data it carries EmptyData. ce_defaulted names each of these,
// so DecodeEnvelopeFields gives back the event unchanged. Subject and actor are
// metadata in E1, optional: d.Subject and d.Actor are not used.
//
// ev is validated first; the error is a *ValidationError using E1 names.
func EncodeEnvelopeFields(ev *Event, d FieldDefaults) ([]string, error) {
	if ev == nil {
		return nil, errors.New("cloudevent: EncodeEnvelopeFields: nil event")
	}
	var p problems
	ev.validate(&p)
	if len(p.list) > 0 {
		renameProblems(&p, 0, e1Names)
		return nil, p.err()
	}
	var corr, version string
	md, err := envelopeMetadata(ev, &corr, &version)
	if err != nil {
		return nil, err
	}
	if ev.DataContentType != "" {
		md["datacontenttype"] = ev.DataContentType
	}
	var filled defaulted
	if corr == "" {
		corr = filled.use(E1CorrelationID, ev.ID)
	}
	if version == "" {
		version = filled.use(E1Version, DefaultDataVersion)
	}
	var ts string
	if ev.Time.IsZero() {
		ts = filled.use(E1Timestamp, formatTime(d.time()))
	} else {
		ts = formatTime(ev.Time)
	}
	data, enc := encodeData(ev.DataContentType, ev.Data)
	if data == "" {
		data = filled.use(E1Data, EmptyData)
	}
	var buf bytes.Buffer
	je := json.NewEncoder(&buf)
	je.SetEscapeHTML(false)
	if err := je.Encode(md); err != nil { // map keys come out sorted
		return nil, err
	}
	out := make([]string, 0, 22)
	out = append(out,
		E1EventID, ev.ID,
		E1CorrelationID, corr,
		E1EventType, ev.Type,
		E1Version, version,
		E1Timestamp, ts,
		E1Source, ev.Source,
		E1Data, data,
		E1Metadata, string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))),
	)
	if enc != "" {
		out = append(out, FieldDataEncoding, enc)
	}
	if types := typeList(ev.Extensions); types != "" {
		out = append(out, FieldTypes, types)
	}
	if list := filled.String(); list != "" {
		out = append(out, FieldDefaulted, list)
	}
	return out, nil
}

// DecodeEnvelopeFields rebuilds an event from seed 001 stream fields (an entry's
// values; see FieldsFromAny). event_id and event_type are required; source falls back
// to WithEnvelopeSource, the tenant to metadata.tenant_id, a top-level tenant_id field
// or WithEnvelopeTenant, in that order of precedence (C1 requires one). The other E1
// fields are optional, and an empty one is absent: a seed 001 entry written by hand
// need not carry them. Values named by ce_defaulted are dropped, types restored from
// ce_types. The result is validated; the error is a *ValidationError listing every
// problem under E1 names (metadata keys as "metadata.<key>").
func DecodeEnvelopeFields(values map[string]string, opts ...EnvelopeOption) (*Event, error) {
	var o envelopeOptions
	for _, opt := range opts {
		opt(&o)
	}
	var p problems
	ev := &Event{
		ID: values[E1EventID], Type: values[E1EventType], Source: values[E1Source], SpecVersion: SpecVersion,
		Extensions: make(map[string]any, 4),
	}
	if ev.Source == "" {
		ev.Source = o.source
	}
	corr, version, ts, data := values[E1CorrelationID], values[E1Version], values[E1Timestamp], values[E1Data]
	if list := values[FieldDefaulted]; list != "" {
		drop := parseDefaultedWith(list, e1Defaultable, &p)
		if drop&e1HasCorrelationID != 0 {
			corr = ""
		}
		if drop&e1HasVersion != 0 {
			version = ""
		}
		if drop&e1HasTimestamp != 0 {
			ts = ""
		}
		if drop&e1HasData != 0 {
			data = ""
		}
	}
	if ts != "" {
		t, err := parseUTCTime(ts)
		if err != nil {
			p.add(E1Timestamp, err.Error())
		}
		ev.Time = t
	}
	setExt := func(name string, v any) {
		if s, ok := v.(string); ok && s == "" {
			return
		}
		ev.Extensions[name] = v
	}
	setExt(ExtCorrelationID, corr)
	setExt(ExtDataVersion, version)
	setExt(ExtTenantID, o.tenant)
	setExt(ExtTenantID, values[E1TenantID])
	if raw := values[E1Metadata]; raw != "" {
		var md map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
		dec.UseNumber()
		if err := dec.Decode(&md); err != nil {
			p.add(E1Metadata, "not a JSON object: "+err.Error())
		} else if dec.More() {
			p.add(E1Metadata, "not a JSON object: trailing data")
		}
		applyMetadata(ev, md, setExt, &p)
	}
	enc := values[FieldDataEncoding]
	decodeData(ev, data, enc, &p)
	if types := values[FieldTypes]; types != "" {
		applyTypeList(ev.Extensions, types, FieldTypes, &p)
	}
	before := len(p.list)
	ev.check(&p, enc != "") // decodeData checked JSON data already
	renameProblems(&p, before, e1Names)
	if err := p.err(); err != nil {
		return nil, err
	}
	return ev, nil
}
