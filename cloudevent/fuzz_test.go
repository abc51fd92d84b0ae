package cloudevent

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"net/textproto"
	"reflect"
	"strings"
	"testing"
)

// The fuzz targets check that no input crashes a parser, that every error is a
// *ValidationError, and that whatever parses survives a second trip unchanged. Their
// seed corpora (testdata/fuzz/<Name>/) hold seed 000's entry and malformed variants.

func FuzzParseJSON(f *testing.F) {
	f.Add([]byte(`{"specversion":"1.0","id":"evt_01JV2Q5P3B8M6X4T9K7R2D1C0A","source":"urn:koder:identity","type":"identity.user.erased","tenantid":"tenant-A","actor":"system","subject":"user-u123","time":"2026-05-14T12:34:56Z","data":{"erasure_id":"ERS-2026-05-14-abc12345"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := ParseJSON(b)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("error %v (%T) is not a *ValidationError with problems", err, err)
			}
			return
		}
		out, err := ev.MarshalJSON()
		if err != nil {
			t.Fatalf("a parsed event does not marshal: %v", err)
		}
		again, err := ParseJSON(out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		if !reflect.DeepEqual(again, ev) {
			t.Fatalf("second trip changed the event\n got %#v\nwant %#v", again, ev)
		}
	})
}

// fuzzFields reads "key\x00value\x00key\x00value..." (the fuzzer mutates bytes).
func fuzzFields(b []byte) map[string]string {
	parts := strings.Split(string(b), "\x00")
	m := make(map[string]string, len(parts)/2)
	for i := 0; i+1 < len(parts); i += 2 {
		m[parts[i]] = parts[i+1]
	}
	return m
}

func FuzzDecodeFields(f *testing.F) {
	var seed []string
	for k, v := range seedEntry() {
		seed = append(seed, k, v)
	}
	f.Add([]byte(strings.Join(seed, "\x00")))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := DecodeFields(fuzzFields(b), "urn:default")
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("error %v (%T) is not a *ValidationError with problems", err, err)
			}
			return
		}
		fields, err := EncodeFieldsWith(ev, FieldDefaults{Subject: "fuzz-subject"})
		if err != nil {
			t.Fatalf("a decoded event does not encode: %v", err)
		}
		m := make(map[string]string, len(fields)/2)
		for i := 0; i < len(fields); i += 2 {
			m[fields[i]] = fields[i+1]
		}
		again, err := DecodeFields(m, "")
		if err != nil {
			t.Fatalf("re-decode of %q: %v", fields, err)
		}
		if !reflect.DeepEqual(again, ev) {
			t.Fatalf("second trip changed the event\n got %#v\nwant %#v", again, ev)
		}
	})
}

// fuzzHeader parses an HTTP header block ("Key: value" lines).
func fuzzHeader(s string) http.Header {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(s + "\r\n\r\n")))
	h, _ := r.ReadMIMEHeader()
	return http.Header(h)
}

func FuzzFromHTTP(f *testing.F) {
	f.Add("Ce-Specversion: 1.0\r\nCe-Id: evt_1\r\nCe-Source: urn:x\r\nCe-Type: identity.user.erased\r\nCe-Tenantid: tenant-A\r\nContent-Type: application/json",
		[]byte(`{"erasure_id":"ERS-2026-05-14-abc12345"}`))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		evs, err := FromHTTP(fuzzHeader(header), body)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("error %v (%T) is not a *ValidationError with problems", err, err)
			}
			return
		}
		for _, ev := range evs {
			for _, mode := range []HTTPMode{HTTPBinary, HTTPStructured} {
				h, b, err := ToHTTP(ev, mode)
				if err != nil {
					t.Fatalf("a parsed event does not encode: %v", err)
				}
				again, err := FromHTTP(h, bytes.Clone(b))
				if err != nil {
					t.Fatalf("mode %d: re-parse: %v\nheaders %v", mode, err, h)
				}
				if len(again) != 1 || !reflect.DeepEqual(again[0], ev) {
					t.Fatalf("mode %d: second trip changed the event\n got %#v\nwant %#v", mode, again, ev)
				}
			}
		}
	})
}

// FuzzFromEnvelope feeds seed 001 envelopes (E1) to the decoder: any input either fails
// with a *ValidationError or yields an event that survives ToEnvelope and back.
func FuzzFromEnvelope(f *testing.F) {
	f.Add([]byte(`{"event_id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","correlation_id":"req_abc123","event_type":"user.created","version":"1.0.0","timestamp":"2024-01-15T10:30:00.000Z","source":"identity-platform","data":{"user_id":"uuid","email":"user@acme.com"},"metadata":{"ip":"192.168.1.1","user_agent":"Mozilla/5.0...","request_id":"uuid"}}`))
	f.Add([]byte(`{"event_id":"","event_type":"user.created","timestamp":"yesterday","data":7}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := FromEnvelope(b, WithEnvelopeTenant("tenant-a"))
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("error %v (%T) is not a *ValidationError with problems", err, err)
			}
			return
		}
		out, err := ToEnvelope(ev)
		if err != nil {
			t.Fatalf("a decoded envelope does not encode: %v", err)
		}
		again, err := FromEnvelope(out, WithEnvelopeTenant("tenant-a"))
		if err != nil {
			t.Fatalf("re-decode of %s: %v", out, err)
		}
		if again.ID != ev.ID || again.Type != ev.Type || !again.Time.Equal(ev.Time) || again.CorrelationID() != ev.CorrelationID() {
			t.Fatalf("second trip changed the event\n got %#v\nwant %#v", again, ev)
		}
	})
}

// FuzzDecodeEnvelopeFields feeds seed 001 stream entries (E1 as fields) to the decoder:
// any input either fails with a *ValidationError or yields an event that survives
// EncodeEnvelopeFields and back unchanged.
func FuzzDecodeEnvelopeFields(f *testing.F) {
	var seed []string
	for k, v := range seed001Entry() {
		seed = append(seed, k, v)
	}
	f.Add([]byte(strings.Join(seed, "\x00")))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := DecodeEnvelopeFields(fuzzFields(b), WithEnvelopeTenant("tenant-a"), WithEnvelopeSource("urn:default"))
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("error %v (%T) is not a *ValidationError with problems", err, err)
			}
			return
		}
		fields, err := EncodeEnvelopeFields(ev, FieldDefaults{})
		if err != nil {
			t.Fatalf("a decoded entry does not encode: %v", err)
		}
		m := make(map[string]string, len(fields)/2)
		for i := 0; i < len(fields); i += 2 {
			m[fields[i]] = fields[i+1]
		}
		again, err := DecodeEnvelopeFields(m)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", fields, err)
		}
		if !reflect.DeepEqual(again, ev) {
			t.Fatalf("second trip changed the event\n got %#v\nwant %#v", again, ev)
		}
	})
}
