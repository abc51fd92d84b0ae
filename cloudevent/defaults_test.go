package cloudevent

import (
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// fieldMap turns encoder output into the map a stream read returns, failing on a
// duplicate field.
func fieldMap(t interface {
	Helper()
	Fatalf(string, ...any)
}, fields []string) map[string]string {
	t.Helper()
	m := make(map[string]string, len(fields)/2)
	for i := 0; i < len(fields); i += 2 {
		if _, dup := m[fields[i]]; dup {
			t.Fatalf("duplicate field %s in %q", fields[i], fields)
		}
		m[fields[i]] = fields[i+1]
	}
	return m
}

// TestR2_NeverEmpty: whatever the event leaves unset, no field of its entry is empty,
// each default is listed in ce_defaulted, and the hub's decoder gives back the event.
func TestR2_NeverEmpty(t *testing.T) {
	t.Parallel()
	accepted := time.Date(2026, 11, 30, 8, 0, 0, 123000000, time.UTC)
	t.Run("Minimal", func(t *testing.T) {
		t.Parallel()
		ev := &Event{ID: "evt_1", Source: "/s", SpecVersion: SpecVersion, Type: "a.b", Extensions: map[string]any{ExtTenantID: "t"}}
		fields, err := EncodeFieldsWith(ev, FieldDefaults{Subject: "unspecified", Time: accepted})
		if err != nil {
			t.Fatal(err)
		}
		m := fieldMap(t, fields)
		want := map[string]string{
			FieldOccurredAt: "2026-11-30T08:00:00.123Z", FieldSubjectID: "unspecified", FieldActor: "system",
			FieldData: "{}", FieldDefaulted: "occurred_at,subject_id,actor,data",
		}
		for k, v := range want {
			if m[k] != v {
				t.Errorf("%s = %q, want %q", k, m[k], v)
			}
		}
		got, err := DecodeFields(m, "")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ev) {
			t.Fatalf("round trip changed the event\n got %#v\nwant %#v", got, ev)
		}
	})
	t.Run("ConfiguredActor", func(t *testing.T) {
		t.Parallel()
		ev := New("/s", "a.b").SetTenantID("t").SetSubject("u1")
		fields, err := EncodeFieldsWith(ev, FieldDefaults{Actor: "service:billing"})
		if err != nil {
			t.Fatal(err)
		}
		if m := fieldMap(t, fields); m[FieldActor] != "service:billing" || m[FieldDefaulted] != "actor,data" {
			t.Fatalf("fields %q", fields)
		}
	})
	t.Run("DefaultTimeIsNow", func(t *testing.T) {
		t.Parallel()
		ev := New("/s", "a.b").SetTenantID("t").SetSubject("u1")
		ev.Time = time.Time{}
		before := time.Now()
		fields, err := EncodeFields(ev)
		if err != nil {
			t.Fatal(err)
		}
		at, err := parseUTCTime(fieldMap(t, fields)[FieldOccurredAt])
		if err != nil || at.Before(before.Add(-time.Millisecond)) || at.After(time.Now()) {
			t.Fatalf("occurred_at %v (%v), want about now", at, err)
		}
	})
	t.Run("EmptyObjectDataIsNotNoData", func(t *testing.T) {
		t.Parallel()
		ev := New("/s", "a.b").SetTenantID("t").SetSubject("u1").SetActor("system")
		ev.Data = []byte("{}")
		fields, _ := EncodeFields(ev)
		m := fieldMap(t, fields)
		if _, ok := m[FieldDefaulted]; ok {
			t.Fatalf("real {} data marked as a default: %q", fields)
		}
		got, err := DecodeFields(m, "")
		if err != nil || string(got.Data) != "{}" {
			t.Fatalf("data %q, %v", got.Data, err)
		}
	})
	t.Run("Random", func(t *testing.T) {
		t.Parallel()
		rapid.Check(t, func(t *rapid.T) {
			ev := genEvent(t)
			fields, err := EncodeFieldsWith(ev, FieldDefaults{Subject: "unspecified", Time: accepted})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(fields); i += 2 {
				if fields[i] == "" || fields[i+1] == "" {
					t.Fatalf("empty field %q=%q in %q", fields[i], fields[i+1], fields)
				}
			}
			got, err := DecodeFields(fieldMap(t, fields), "")
			if err != nil || !reflect.DeepEqual(got, ev) {
				t.Fatalf("round trip: %v\n got %#v\nwant %#v", err, got, ev)
			}
		})
	})
}

// TestR2_SubjectRequired: without a subject and without a default subject the event is
// refused, on subject_id.
func TestR2_SubjectRequired(t *testing.T) {
	t.Parallel()
	ev := New("/s", "a.b").SetTenantID("t")
	_, err := EncodeFields(ev)
	ve, ok := err.(*ValidationError)
	if !ok || !ve.Has(FieldSubjectID) || len(ve.Problems) != 1 || ve.HubCode() != invalidArgumentCode {
		t.Fatalf("err = %v", err)
	}
}

// TestR2_EmptyFieldIsMalformed: an entry with an empty mandatory field is malformed like
// one without it (N2), unless AllowEmptyFields accepts legacy entries.
func TestR2_EmptyFieldIsMalformed(t *testing.T) {
	t.Parallel()
	for _, f := range []string{FieldType, FieldEventID, FieldOccurredAt, FieldTenantID, FieldSubjectID, FieldActor, FieldData} {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			m := seedEntry()
			m[f] = ""
			_, err := DecodeFields(m, "urn:x")
			ve, ok := err.(*ValidationError)
			if !ok || !ve.Has(f) || len(ve.Problems) != 1 {
				t.Fatalf("err = %v, want one problem on %s", err, f)
			}
		})
	}
	t.Run("AllowEmptyFields", func(t *testing.T) {
		t.Parallel()
		m := seedEntry()
		m[FieldSubjectID], m[FieldActor], m[FieldOccurredAt], m[FieldData] = "", "", "", ""
		ev, err := DecodeFields(m, "urn:x", AllowEmptyFields())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Subject != "" || ev.Actor() != "" || !ev.Time.IsZero() || ev.Data != nil {
			t.Fatalf("legacy empty fields not read as unset: %#v", ev)
		}
		m[FieldTenantID] = ""
		if _, err := DecodeFields(m, "urn:x", AllowEmptyFields()); err == nil {
			t.Fatal("an empty tenant_id passed: C1 requires a tenant whatever the option")
		}
	})
	t.Run("BadDefaultedList", func(t *testing.T) {
		t.Parallel()
		m := seedEntry()
		m[FieldDefaulted] = "actor,tenant_id,actor"
		_, err := DecodeFields(m, "urn:x")
		ve, ok := err.(*ValidationError)
		if !ok || !ve.Has(FieldDefaulted) || len(ve.Problems) != 2 {
			t.Fatalf("err = %v", err)
		}
	})
}
