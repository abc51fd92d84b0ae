package cloudevent_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/koder/eventhub/cloudevent"
)

func ExampleNew() {
	ev := cloudevent.New("urn:koder:identity", "identity.user.erased")
	ev.SetTenantID("tenant-A").SetActor("system").SetSubject("user-u123")
	if err := ev.SetData("", map[string]string{"erasure_id": "ERS-2026-05-14-abc12345"}); err != nil {
		panic(err)
	}
	fmt.Println(strings.HasPrefix(ev.ID, cloudevent.IDPrefix), ev.SpecVersion, ev.DataContentType)
	fmt.Println(string(ev.Data))
	fmt.Println(ev.Validate())
	// Output:
	// true 1.0 application/json
	// {"erasure_id":"ERS-2026-05-14-abc12345"}
	// <nil>
}

func ExampleEvent_Validate() {
	ev := &cloudevent.Event{SpecVersion: "1.0", Type: "user.created", DataSchema: "schemas/user"}
	var ve *cloudevent.ValidationError
	if errors.As(ev.Validate(), &ve) {
		for _, p := range ve.Problems {
			fmt.Printf("%s: %s\n", p.Field, p.Message)
		}
	}
	// Output:
	// id: required
	// source: required
	// dataschema: not an absolute URI
	// tenantid: required (C1)
}

func ExampleParseJSON() {
	ev, err := cloudevent.ParseJSON([]byte(`{
		"specversion": "1.0", "id": "evt_01JV2Q5P3B8M6X4T9K7R2D1C0A", "source": "urn:koder:identity",
		"type": "identity.user.erased", "tenantid": "tenant-A", "attempt": 2,
		"data": {"erasure_id": "ERS-2026-05-14-abc12345"}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(ev.Type, ev.TenantID(), ev.Extensions["attempt"])
	fmt.Println(string(ev.Data))

	_, err = cloudevent.ParseJSON([]byte(`{"specversion": "1.0", "type": "x", "count": 1.5}`))
	fmt.Println(err)
	// Output:
	// identity.user.erased tenant-A 2
	// {"erasure_id": "ERS-2026-05-14-abc12345"}
	// cloudevent: invalid event: count: number is not an integer in the 32-bit range; id: required; source: required; tenantid: required (C1)
}

func ExampleEncodeFields() {
	ev := cloudevent.New("urn:koder:identity", "identity.user.erased")
	ev.ID = "evt_01JV2Q5P3B8M6X4T9K7R2D1C0A"
	ev.Time = time.Date(2026, 5, 14, 12, 34, 56, 0, time.UTC)
	ev.SetTenantID("tenant-A").SetActor("system").SetSubject("user-u123")
	ev.SetExtension("attempt", int32(2))
	_ = ev.SetData("", []byte(`{"erasure_id":"ERS-2026-05-14-abc12345"}`))

	fields, err := cloudevent.EncodeFields(ev)
	if err != nil {
		panic(err)
	}
	for i := 0; i < len(fields); i += 2 {
		fmt.Printf("%s %s\n", fields[i], fields[i+1])
	}
	// Output:
	// type identity.user.erased
	// event_id evt_01JV2Q5P3B8M6X4T9K7R2D1C0A
	// occurred_at 2026-05-14T12:34:56Z
	// tenant_id tenant-A
	// subject_id user-u123
	// actor system
	// data {"erasure_id":"ERS-2026-05-14-abc12345"}
	// source urn:koder:identity
	// specversion 1.0
	// datacontenttype application/json
	// attempt 2
	// ce_types attempt:integer
}

func ExampleDecodeFields() {
	// An entry written by hand exactly as in R2: no source field, so the stream's
	// configured source is used.
	ev, err := cloudevent.DecodeFields(map[string]string{
		"type":        "identity.user.erased",
		"event_id":    "evt_01JV2Q5P3B8M6X4T9K7R2D1C0A",
		"occurred_at": "2026-05-14T12:34:56Z",
		"tenant_id":   "tenant-A",
		"subject_id":  "user-u123",
		"actor":       "system",
		"data":        `{"erasure_id":"ERS-2026-05-14-abc12345"}`,
	}, "urn:koder:identity")
	if err != nil {
		panic(err)
	}
	fmt.Println(ev.Source, ev.Type, ev.Subject, ev.TenantID(), ev.Actor(), ev.Time)

	_, err = cloudevent.DecodeFields(map[string]string{"type": "identity.user.erased", "data": "{"}, "urn:x")
	fmt.Println(err)
	// Output:
	// urn:koder:identity identity.user.erased user-u123 tenant-A system 2026-05-14 12:34:56 +0000 UTC
	// cloudevent: invalid event: event_id: missing (R2 requires this field); occurred_at: missing (R2 requires this field); tenant_id: missing (R2 requires this field); subject_id: missing (R2 requires this field); actor: missing (R2 requires this field); data: not valid JSON (R2: data is JSON-encoded)
}

func ExampleToHTTP() {
	ev := cloudevent.New("urn:koder:identity", "user.created")
	ev.ID = "evt_01JV2Q5P3B8M6X4T9K7R2D1C0A"
	ev.Time = time.Date(2026, 5, 14, 12, 34, 56, 0, time.UTC)
	ev.SetTenantID("tenant-A").SetSubject("Zoë Müller")
	_ = ev.SetData("", []byte(`{"user_id":"u1"}`))

	h, body, err := cloudevent.ToHTTP(ev, cloudevent.HTTPBinary)
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"Ce-Id", "Ce-Subject", "Ce-Tenantid", "Content-Type"} {
		fmt.Printf("%s: %s\n", k, h.Get(k))
	}
	fmt.Println(string(body))

	evs, err := cloudevent.FromHTTP(h, body)
	if err != nil {
		panic(err)
	}
	fmt.Println(evs[0].Subject)
	// Output:
	// Ce-Id: evt_01JV2Q5P3B8M6X4T9K7R2D1C0A
	// Ce-Subject: Zo%C3%AB%20M%C3%BCller
	// Ce-Tenantid: tenant-A
	// Content-Type: application/json
	// {"user_id":"u1"}
	// Zoë Müller
}

func ExampleFromHTTP() {
	h := http.Header{}
	h.Set("Content-Type", cloudevent.ContentTypeBatch)
	evs, err := cloudevent.FromHTTP(h, []byte(`[
		{"specversion":"1.0","id":"1","source":"urn:a","type":"user.created","tenantid":"t"},
		{"specversion":"1.0","id":"2","source":"urn:a","type":"user.deleted","tenantid":"t"}]`))
	if err != nil {
		panic(err)
	}
	for _, ev := range evs {
		fmt.Println(ev.ID, ev.Type)
	}
	// Output:
	// 1 user.created
	// 2 user.deleted
}

func ExampleFromHTTPRequest() {
	h, body, _ := cloudevent.ToHTTP(cloudevent.New("urn:a", "user.created").SetTenantID("t"), cloudevent.HTTPStructured)
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/events", strings.NewReader(string(body)))
	req.Header = h
	_, err := cloudevent.FromHTTPRequest(req, 16)
	fmt.Println(errors.Is(err, cloudevent.ErrTooLarge), err)
	// Output:
	// true cloudevent: request body exceeds 16 bytes
}

func ExampleToEnvelope() {
	ev := cloudevent.New("identity-platform", "user.created")
	ev.ID = "evt_01JV2Q5P3B8M6X4T9K7R2D1C0A"
	ev.Time = time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)
	ev.SetTenantID("tenant-A").SetCorrelationID("req_abc123").SetDataVersion("1.0.0")
	ev.SetExtension("useragent", "Mozilla/5.0")
	_ = ev.SetData("", []byte(`{"user_id":"u1","email":"user@acme.com"}`))

	b, err := cloudevent.ToEnvelope(ev)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))

	back, err := cloudevent.FromEnvelope(b)
	if err != nil {
		panic(err)
	}
	fmt.Println(back.TenantID(), back.CorrelationID(), back.DataVersion(), back.Extension("useragent"))
	// Output:
	// {"event_id":"evt_01JV2Q5P3B8M6X4T9K7R2D1C0A","correlation_id":"req_abc123","event_type":"user.created","version":"1.0.0","timestamp":"2024-01-15T10:30:00Z","source":"identity-platform","data":{"user_id":"u1","email":"user@acme.com"},"metadata":{"tenant_id":"tenant-A","user_agent":"Mozilla/5.0"}}
	// tenant-A req_abc123 1.0.0 Mozilla/5.0
}

func ExampleFromEnvelope() {
	ev, err := cloudevent.FromEnvelope([]byte(`{"event_id":"6f1c","correlation_id":"req_1","event_type":"session.created",
		"version":"1.0.0","timestamp":"2024-01-15T10:30:00.000Z","source":"identity-platform",
		"data":{"session_id":"s1"},"metadata":{"ip":"192.168.1.1","request_id":"r1"}}`),
		cloudevent.WithEnvelopeTenant("tenant-A"))
	if err != nil {
		panic(err)
	}
	fmt.Println(ev.ID, ev.Type, ev.TenantID(), ev.Extension("ip"), ev.Extension("requestid"))
	// Output:
	// 6f1c session.created tenant-A 192.168.1.1 r1
}

func ExampleToMessage() {
	ev := cloudevent.New("urn:koder:identity", "user.created").SetTenantID("tenant-A")
	ev.SetExtension("attempt", int32(1))
	msg, err := cloudevent.ToMessage(ev)
	if err != nil {
		panic(err)
	}
	fmt.Println(msg.UUID == ev.ID, msg.Metadata.Get("ce_type"), msg.Metadata.Get("ce_attempt"), msg.Metadata.Get(cloudevent.MetaExtTypes))

	back, err := cloudevent.FromMessage(msg)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%T\n", back.Extensions["attempt"])
	// Output:
	// true user.created 1 attempt:integer
	// int32
}

// EncodeFieldsWith never writes an empty R2 field: what the event leaves unset takes a
// wire default, named in ce_defaulted, and DecodeFields removes it again.
func ExampleEncodeFieldsWith() {
	ev := cloudevent.New("urn:koder:identity", "identity.session.swept")
	ev.ID = "evt_01JV2Q5P3B8M6X4T9K7R2D1C0A"
	ev.Time = time.Date(2026, 5, 14, 12, 34, 56, 0, time.UTC)
	ev.SetTenantID("tenant-A") // no subject, no actor, no data

	fields, err := cloudevent.EncodeFieldsWith(ev, cloudevent.FieldDefaults{Subject: "unspecified"})
	if err != nil {
		panic(err)
	}
	m := map[string]string{}
	for i := 0; i < len(fields); i += 2 {
		m[fields[i]] = fields[i+1]
	}
	fmt.Println(m["subject_id"], m["actor"], m["data"], m["ce_defaulted"])
	back, _ := cloudevent.DecodeFields(m, "")
	fmt.Printf("%q %q %d\n", back.Subject, back.Actor(), len(back.Data))

	_, err = cloudevent.EncodeFields(ev)
	fmt.Println(err)
	// Output:
	// unspecified system {} subject_id,actor,data
	// "" "" 0
	// cloudevent: invalid event: subject_id: missing: R2 requires a subject; set the event's subject or configure a default subject
}

// Seed 001's envelope as stream fields, as products reading events.user expect them.
func ExampleEncodeEnvelopeFields() {
	ev := cloudevent.New("identity-platform", "user.created")
	ev.ID = "evt_01JV2Q5P3B8M6X4T9K7R2D1C0A"
	ev.Time = time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)
	ev.SetTenantID("tenant-A").SetCorrelationID("req_abc123").SetDataVersion("1.0.0")
	ev.SetExtension("ip", "192.168.1.1")
	_ = ev.SetData("", []byte(`{"user_id":"u1","email":"user@acme.com"}`))

	fields, err := cloudevent.EncodeEnvelopeFields(ev, cloudevent.FieldDefaults{})
	if err != nil {
		panic(err)
	}
	for i := 0; i < len(fields); i += 2 {
		fmt.Printf("%s %s\n", fields[i], fields[i+1])
	}
	// Output:
	// event_id evt_01JV2Q5P3B8M6X4T9K7R2D1C0A
	// correlation_id req_abc123
	// event_type user.created
	// version 1.0.0
	// timestamp 2024-01-15T10:30:00Z
	// source identity-platform
	// data {"user_id":"u1","email":"user@acme.com"}
	// metadata {"datacontenttype":"application/json","ip":"192.168.1.1","tenant_id":"tenant-A"}
}

// DecodeEnvelopeFields reads an entry a seed 001 product wrote by hand; the tenant,
// which E1 has no field for, comes from the option when metadata has none.
func ExampleDecodeEnvelopeFields() {
	ev, err := cloudevent.DecodeEnvelopeFields(map[string]string{
		"event_id":       "7c9e6679-7425-40de-944b-e07fc1f90ae7",
		"correlation_id": "req_abc123",
		"event_type":     "user.created",
		"version":        "1.0.0",
		"timestamp":      "2024-01-15T10:30:00.000Z",
		"source":         "identity-platform",
		"data":           `{"user_id":"uuid","email":"user@acme.com"}`,
		"metadata":       `{"ip":"192.168.1.1","user_agent":"Mozilla/5.0...","request_id":"uuid"}`,
	}, cloudevent.WithEnvelopeTenant("tenant-A"))
	if err != nil {
		panic(err)
	}
	fmt.Println(ev.Type, ev.TenantID(), ev.CorrelationID(), ev.DataVersion(), ev.Extension("useragent"))
	// Output: user.created tenant-A req_abc123 1.0.0 Mozilla/5.0...
}
