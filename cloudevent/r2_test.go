package cloudevent

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// seedEntry is R2's example XADD (seed 000), with a real ULID in place of <ulid>.
func seedEntry() map[string]string {
	return map[string]string{
		"type":        "identity.user.erased",
		"event_id":    "evt_01JV2Q5P3B8M6X4T9K7R2D1C0A",
		"occurred_at": "2026-05-14T12:34:56Z",
		"tenant_id":   "tenant-A",
		"subject_id":  "user-u123",
		"actor":       "system",
		"data":        `{"erasure_id":"ERS-2026-05-14-abc12345"}`,
	}
}

func TestR2_SeedEntryParses(t *testing.T) {
	t.Parallel()
	ev, err := DecodeFields(seedEntry(), "urn:koder:identity")
	if err != nil {
		t.Fatal(err)
	}
	want := &Event{
		ID:          "evt_01JV2Q5P3B8M6X4T9K7R2D1C0A",
		Source:      "urn:koder:identity",
		SpecVersion: SpecVersion,
		Type:        "identity.user.erased",
		Subject:     "user-u123",
		Time:        time.Date(2026, 5, 14, 12, 34, 56, 0, time.UTC),
		Data:        []byte(`{"erasure_id":"ERS-2026-05-14-abc12345"}`),
		Extensions:  map[string]any{ExtTenantID: "tenant-A", ExtActor: "system"},
	}
	if !reflect.DeepEqual(ev, want) {
		t.Fatalf("decoded\n%#v\nwant\n%#v", ev, want)
	}
	if ev.TenantID() != "tenant-A" || ev.Actor() != "system" {
		t.Fatalf("accessors: tenant %q actor %q", ev.TenantID(), ev.Actor())
	}
	t.Run("LiteralPlaceholderID", func(t *testing.T) {
		t.Parallel()
		m := seedEntry()
		m["event_id"] = "evt_<ulid>" // character for character as R2 prints it
		ev, err := DecodeFields(m, "urn:koder:identity")
		if err != nil || ev.ID != "evt_<ulid>" {
			t.Fatalf("ev %+v err %v", ev, err)
		}
	})
	t.Run("FromGoRedisValues", func(t *testing.T) {
		t.Parallel()
		values := make(map[string]any)
		for k, v := range seedEntry() {
			values[k] = v
		}
		got, err := DecodeFields(FieldsFromAny(values), "urn:koder:identity")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("got %#v err %v", got, err)
		}
	})
}

func TestR2_FieldOrder(t *testing.T) {
	t.Parallel()
	ev, err := DecodeFields(seedEntry(), "urn:koder:identity")
	if err != nil {
		t.Fatal(err)
	}
	ev.SetCorrelationID("req_abc123").SetDataVersion("1.0.0")
	ev.SetExtension("attempt", int32(2))
	fields, err := EncodeFields(ev)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := 0; i < len(fields); i += 2 {
		keys = append(keys, fields[i])
	}
	want := []string{
		FieldType, FieldEventID, FieldOccurredAt, FieldTenantID, FieldSubjectID, FieldActor, FieldData,
		FieldSource, FieldSpecVersion, "attempt", ExtCorrelationID, ExtDataVersion, FieldTypes,
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	if got := fields[len(fields)-1]; got != "attempt:integer" {
		t.Fatalf("ce_types = %q", got)
	}
}

func TestN2_MissingFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		drop    []string
		set     map[string]string
		problem []string
	}{
		{name: "EachMissingFieldNamed", drop: []string{"type", "event_id", "occurred_at", "tenant_id", "subject_id", "actor", "data"},
			problem: []string{"type", "event_id", "occurred_at", "tenant_id", "subject_id", "actor", "data"}},
		{name: "MissingSubject", drop: []string{"subject_id"}, problem: []string{"subject_id"}},
		{name: "BadTime", set: map[string]string{"occurred_at": "14/05/2026"}, problem: []string{"occurred_at"}},
		{name: "TimeWithoutZoneIsUTC", set: map[string]string{"occurred_at": "2026-05-14T12:34:56.123456"}},
		{name: "BadJSONData", set: map[string]string{"data": `{"erasure_id":`}, problem: []string{"data"}},
		{name: "EmptyTenant", set: map[string]string{"tenant_id": ""}, problem: []string{"tenant_id"}},
		{name: "BadTypeList", set: map[string]string{"ce_types": "nope:integer,x"}, problem: []string{"ce_types", "ce_types"}},
		{name: "BadTypedValue", set: map[string]string{"attempt": "two", "ce_types": "attempt:integer"}, problem: []string{"attempt"}},
		{name: "BadEncoding", set: map[string]string{"data_encoding": "rot13"}, problem: []string{"data_encoding"}},
		{name: "BadSpecVersion", set: map[string]string{"specversion": "0.3"}, problem: []string{"specversion"}},
		{name: "BadDataSchema", set: map[string]string{"dataschema": "relative/path"}, problem: []string{"dataschema"}},
		{name: "Several", drop: []string{"actor"}, set: map[string]string{"occurred_at": "x", "data": "{"},
			problem: []string{"actor", "occurred_at", "data"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := seedEntry()
			for _, k := range tc.drop {
				delete(m, k)
			}
			for k, v := range tc.set {
				m[k] = v
			}
			ev, err := DecodeFields(m, "urn:x")
			if len(tc.problem) == 0 {
				if err != nil || ev.Time.Location() != time.UTC {
					t.Fatalf("ev %+v err %v", ev, err)
				}
				return
			}
			ve, ok := err.(*ValidationError)
			if !ok {
				t.Fatalf("err = %v (%T), want *ValidationError", err, err)
			}
			for _, f := range tc.problem {
				if !ve.Has(f) {
					t.Errorf("no problem for %s in %v", f, err)
				}
			}
			if len(ve.Problems) != len(tc.problem) {
				t.Errorf("%d problems, want %d: %v", len(ve.Problems), len(tc.problem), err)
			}
			if ve.HubCode() != 3 {
				t.Errorf("HubCode %d", ve.HubCode())
			}
		})
	}
}

func TestR2_MissingSourceUsesDefault(t *testing.T) {
	t.Parallel()
	t.Run("NoDefaultIsAProblem", func(t *testing.T) {
		t.Parallel()
		_, err := DecodeFields(seedEntry(), "")
		if ve, ok := err.(*ValidationError); !ok || !ve.Has("source") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("FieldWinsOverDefault", func(t *testing.T) {
		t.Parallel()
		m := seedEntry()
		m["source"] = "urn:a"
		ev, err := DecodeFields(m, "urn:b")
		if err != nil || ev.Source != "urn:a" {
			t.Fatalf("ev %+v err %v", ev, err)
		}
	})
}

func TestR2_RoundTrip(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		ev := genEvent(t)
		// A default subject: R2 refuses subject-less events without one (see
		// TestR2_SubjectRequired); ce_defaulted makes the trip lossless anyway.
		fields, err := EncodeFieldsWith(ev, FieldDefaults{Subject: "subject-default"})
		if err != nil {
			t.Fatal(err)
		}
		if len(fields) < 14 || len(fields)%2 != 0 {
			t.Fatalf("fields %q", fields)
		}
		m := make(map[string]string, len(fields)/2)
		for i := 0; i < len(fields); i += 2 {
			if _, dup := m[fields[i]]; dup {
				t.Fatalf("duplicate field %s", fields[i])
			}
			m[fields[i]] = fields[i+1]
		}
		got, err := DecodeFields(m, "")
		if err != nil {
			t.Fatalf("decode %q: %v", fields, err)
		}
		if !reflect.DeepEqual(got, ev) {
			t.Fatalf("round trip changed the event\n got %#v\nwant %#v\nfields %q", got, ev, fields)
		}
	})
}

func TestR2_EncodeRejects(t *testing.T) {
	t.Parallel()
	ev := New("urn:x", "a.b")
	ev.SetExtension("Bad_Name", "x")
	ev.SetExtension("count", 3) // int, not int32
	_, err := EncodeFields(ev)
	ve, ok := err.(*ValidationError)
	if !ok || !ve.Has("tenant_id") || !ve.Has("Bad_Name") || !ve.Has("count") {
		t.Fatalf("err = %v", err)
	}
}

func TestR2_FieldsFromAny(t *testing.T) {
	t.Parallel()
	got := FieldsFromAny(map[string]any{"a": "x", "b": []byte("y"), "c": 7, "d": nil})
	want := map[string]string{"a": "x", "b": "y", "c": "7", "d": ""}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
}
