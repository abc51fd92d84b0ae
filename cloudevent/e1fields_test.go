package cloudevent

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// seed001Entry is seed 001's example event as stream fields, written by hand the way a
// product reading the seed would: data and metadata as JSON text.
func seed001Entry() map[string]string {
	return map[string]string{
		"event_id":       "7c9e6679-7425-40de-944b-e07fc1f90ae7",
		"correlation_id": "req_abc123",
		"event_type":     "user.created",
		"version":        "1.0.0",
		"timestamp":      "2024-01-15T10:30:00.000Z",
		"source":         "identity-platform",
		"data":           `{"user_id":"uuid","email":"user@acme.com"}`,
		"metadata":       `{"ip":"192.168.1.1","user_agent":"Mozilla/5.0...","request_id":"uuid"}`,
	}
}

func TestE1_Fields(t *testing.T) {
	t.Parallel()
	t.Run("HandWrittenEntryParses", func(t *testing.T) {
		t.Parallel()
		ev, err := DecodeEnvelopeFields(seed001Entry(), WithEnvelopeTenant("tenant-A"))
		if err != nil {
			t.Fatal(err)
		}
		want := &Event{
			ID: "7c9e6679-7425-40de-944b-e07fc1f90ae7", Source: "identity-platform", SpecVersion: SpecVersion,
			Type: "user.created", Time: time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC),
			Data: []byte(`{"user_id":"uuid","email":"user@acme.com"}`),
			Extensions: map[string]any{
				ExtTenantID: "tenant-A", ExtCorrelationID: "req_abc123", ExtDataVersion: "1.0.0",
				"ip": "192.168.1.1", "useragent": "Mozilla/5.0...", "requestid": "uuid",
			},
		}
		if !reflect.DeepEqual(ev, want) {
			t.Fatalf("decoded\n%#v\nwant\n%#v", ev, want)
		}
	})
	t.Run("TenantPrecedence", func(t *testing.T) {
		t.Parallel()
		m := seed001Entry()
		m["tenant_id"] = "top"
		ev, err := DecodeEnvelopeFields(m, WithEnvelopeTenant("default"))
		if err != nil || ev.TenantID() != "top" {
			t.Fatalf("tenant %q, %v", ev.TenantID(), err)
		}
		m["metadata"] = `{"tenant_id":"meta"}`
		if ev, err = DecodeEnvelopeFields(m, WithEnvelopeTenant("default")); err != nil || ev.TenantID() != "meta" {
			t.Fatalf("tenant %q, %v", ev.TenantID(), err)
		}
	})
	t.Run("Problems", func(t *testing.T) {
		t.Parallel()
		m := seed001Entry()
		delete(m, "event_id")
		m["timestamp"] = "yesterday"
		m["metadata"] = `{"n":1.5}`
		m["data"] = `{"user_id":`
		_, err := DecodeEnvelopeFields(m)
		ve, ok := err.(*ValidationError)
		if !ok {
			t.Fatalf("err = %v", err)
		}
		for _, f := range []string{E1EventID, E1Timestamp, "metadata.n", E1Data, ExtTenantID} {
			if !ve.Has(f) {
				t.Errorf("no problem on %s: %v", f, err)
			}
		}
		m = seed001Entry()
		m["metadata"] = `[1]`
		if _, err := DecodeEnvelopeFields(m, WithEnvelopeTenant("t")); err == nil {
			t.Error("metadata that is not an object passed")
		}
	})
	t.Run("NeverEmptyAndDefaultsDropped", func(t *testing.T) {
		t.Parallel()
		ev := &Event{ID: "evt_1", Source: "/s", SpecVersion: SpecVersion, Type: "user.created", Extensions: map[string]any{ExtTenantID: "t"}}
		at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		fields, err := EncodeEnvelopeFields(ev, FieldDefaults{Time: at})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for i := 0; i < len(fields); i += 2 {
			keys = append(keys, fields[i])
		}
		if want := []string{E1EventID, E1CorrelationID, E1EventType, E1Version, E1Timestamp, E1Source, E1Data, E1Metadata, FieldDefaulted}; !slices.Equal(keys, want) {
			t.Fatalf("keys %v, want %v", keys, want)
		}
		m := fieldMap(t, fields)
		if m[E1CorrelationID] != "evt_1" || m[E1Version] != "1.0.0" || m[E1Timestamp] != "2026-11-30T08:00:00Z" ||
			m[E1Data] != "{}" || m[E1Metadata] != `{"tenant_id":"t"}` || m[FieldDefaulted] != "correlation_id,version,timestamp,data" {
			t.Fatalf("fields %v", m)
		}
		got, err := DecodeEnvelopeFields(m)
		if err != nil || !reflect.DeepEqual(got, ev) {
			t.Fatalf("round trip: %v\n got %#v\nwant %#v", err, got, ev)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		rapid.Check(t, func(t *rapid.T) {
			ev := genEvent(t)
			fields, err := EncodeEnvelopeFields(ev, FieldDefaults{})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(fields); i += 2 {
				if fields[i+1] == "" {
					t.Fatalf("empty field %s in %q", fields[i], fields)
				}
			}
			m := fieldMap(t, fields)
			var data, md any
			if json.Unmarshal([]byte(m[E1Data]), &data) != nil || json.Unmarshal([]byte(m[E1Metadata]), &md) != nil {
				t.Fatalf("data or metadata is not JSON: %q", fields)
			}
			if _, ok := md.(map[string]any); !ok {
				t.Fatalf("metadata is not an object: %s", m[E1Metadata])
			}
			got, err := DecodeEnvelopeFields(m)
			if err != nil {
				t.Fatalf("decode %q: %v", fields, err)
			}
			if !reflect.DeepEqual(got, ev) {
				t.Fatalf("round trip changed the event\n got %#v\nwant %#v\nfields %q", got, ev, fields)
			}
		})
	})
}
