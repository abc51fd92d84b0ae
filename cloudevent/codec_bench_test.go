package cloudevent

import (
	"encoding/json"
	"testing"
	"time"
)

// benchEvent is a typical identity event: R2's seven fields plus source, a correlation
// id, the payload version and a trace parent.
func benchEvent() *Event {
	ev := New("urn:koder:identity", "identity.user.erased")
	ev.SetTenantID("tenant-A").SetActor("system").SetSubject("user-u123").
		SetCorrelationID("req_01JV2Q5P3B8M6X4T9K7R2D1C0A").SetDataVersion("1.0.0")
	ev.SetExtension(ExtTraceParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	_ = ev.SetData(ContentTypeJSON, []byte(`{"erasure_id":"ERS-2026-05-14-abc12345","user_id":"user-u123"}`))
	return ev
}

// baseEvent is the same event as a plain struct for encoding/json: the baseline does
// no validation and keeps no extension types.
type baseEvent struct {
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	SpecVersion     string          `json:"specversion"`
	Type            string          `json:"type"`
	DataContentType string          `json:"datacontenttype,omitempty"`
	Subject         string          `json:"subject,omitempty"`
	Time            time.Time       `json:"time"`
	TenantID        string          `json:"tenantid"`
	Actor           string          `json:"actor,omitempty"`
	CorrelationID   string          `json:"correlationid,omitempty"`
	DataVersion     string          `json:"dataversion,omitempty"`
	TraceParent     string          `json:"traceparent,omitempty"`
	Data            json.RawMessage `json:"data,omitempty"`
}

func toBase(ev *Event) baseEvent {
	return baseEvent{
		ID: ev.ID, Source: ev.Source, SpecVersion: ev.SpecVersion, Type: ev.Type,
		DataContentType: ev.DataContentType, Subject: ev.Subject, Time: ev.Time,
		TenantID: ev.TenantID(), Actor: ev.Actor(), CorrelationID: ev.CorrelationID(),
		DataVersion: ev.DataVersion(), TraceParent: ev.Extension(ExtTraceParent), Data: ev.Data,
	}
}

// BenchmarkR2Codec: one op = encode one event to R2 fields and decode (and validate)
// it from the field map a Redis client returns, against encoding/json Marshal +
// Unmarshal of the same event as a struct.
func BenchmarkR2Codec(b *testing.B) {
	ev := benchEvent()
	b.Run("hub", func(b *testing.B) {
		fields, err := EncodeFields(ev)
		if err != nil {
			b.Fatal(err)
		}
		m := make(map[string]string, len(fields)/2)
		for i := 0; i < len(fields); i += 2 {
			m[fields[i]] = fields[i+1]
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := EncodeFields(ev); err != nil {
				b.Fatal(err)
			}
			if _, err := DecodeFields(m, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("base_json", func(b *testing.B) {
		be := toBase(ev)
		b.ReportAllocs()
		for b.Loop() {
			out, err := json.Marshal(&be)
			if err != nil {
				b.Fatal(err)
			}
			var back baseEvent
			if err := json.Unmarshal(out, &back); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkParseJSON: one op = parse (and validate) one structured-mode event, against
// encoding/json Unmarshal into a struct (no validation).
func BenchmarkParseJSON(b *testing.B) {
	ev := benchEvent()
	body, err := ev.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("hub", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParseJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("base_json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var back baseEvent
			if err := json.Unmarshal(body, &back); err != nil {
				b.Fatal(err)
			}
		}
	})
}
