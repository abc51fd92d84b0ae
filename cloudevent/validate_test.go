package cloudevent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func validEvent() *Event {
	ev := New("urn:koder:identity", "identity.user.erased")
	ev.SetTenantID("tenant-A").SetActor("system").SetSubject("user-u123")
	_ = ev.SetData("", map[string]string{"erasure_id": "ERS-1"})
	return ev
}

func TestC1_Validate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		mutate func(*Event)
		want   []string // fields with a problem, in order; nil = valid
	}{
		{name: "Valid", mutate: func(*Event) {}},
		{name: "EmptyEventListsEveryRequired", mutate: func(e *Event) { *e = Event{} },
			want: []string{"id", "type", "source", "specversion", "tenantid"}},
		{name: "TenantMustBeString", mutate: func(e *Event) { e.SetExtension(ExtTenantID, int32(1)) },
			want: []string{"tenantid"}},
		{name: "BadSpecVersion", mutate: func(e *Event) { e.SpecVersion = "0.3" }, want: []string{"specversion"}},
		{name: "BadMediaType", mutate: func(e *Event) { e.DataContentType = "application/json; ===" },
			want: []string{"datacontenttype"}},
		{name: "RelativeDataSchema", mutate: func(e *Event) { e.DataSchema = "/schemas/x" }, want: []string{"dataschema"}},
		{name: "BadSource", mutate: func(e *Event) { e.Source = "http://[::1" }, want: []string{"source"}},
		{name: "InvalidUTF8", mutate: func(e *Event) { e.Type = "a\xffb"; e.Subject = "\xfe" }, want: []string{"type", "subject"}},
		{name: "TimeOutOfRange", mutate: func(e *Event) { e.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
			want: []string{"time"}},
		{name: "BadJSONData", mutate: func(e *Event) { e.Data = []byte(`{"a":`) }, want: []string{"data"}},
		{name: "NonJSONDataNotChecked", mutate: func(e *Event) { e.DataContentType = "image/png"; e.Data = []byte{0xff} }},
		{name: "ExtensionProblemsAllListed", mutate: func(e *Event) {
			e.SetExtension("Upper", "x")
			e.SetExtension("waytoolongextensionname", "x")
			e.SetExtension("subject", "x")
			e.SetExtension("count", 7)
			e.SetExtension("empty", "")
			e.SetExtension("nobytes", []byte{})
			e.SetExtension("link", URI("relative/x"))
			e.SetExtension("when", time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC))
		}, want: []string{"Upper", "count", "empty", "link", "nobytes", "subject", "waytoolongextensionname", "when"}},
		{name: "EveryTypeAccepted", mutate: func(e *Event) {
			e.SetExtension("s", "x")
			e.SetExtension("b", false)
			e.SetExtension("i", int32(-5))
			e.SetExtension("bin", []byte{0})
			e.SetExtension("ts", time.Now())
			e.SetExtension("uri", URI("https://x.example/a"))
			e.SetExtension("ref", URIRef("../a"))
		}},
		{name: "SeveralAtOnce", mutate: func(e *Event) {
			e.ID = ""
			e.DataSchema = "nope"
			e.Data = []byte("{")
			e.SetTenantID("")
		}, want: []string{"id", "dataschema", "tenantid", "data"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev := validEvent()
			tc.mutate(ev)
			err := ev.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want *ValidationError", err)
			}
			var got []string
			for _, p := range ve.Problems {
				got = append(got, p.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("problems %v, want fields %v (%v)", got, tc.want, err)
			}
			if !strings.HasPrefix(err.Error(), "cloudevent: invalid event: ") {
				t.Fatalf("Error() = %q", err)
			}
		})
	}
}

func TestC1_New(t *testing.T) {
	t.Parallel()
	before := time.Now()
	ev := New("urn:x", "user.created")
	if ev.SpecVersion != "1.0" || ev.DataContentType != "application/json" || ev.Source != "urn:x" || ev.Type != "user.created" {
		t.Fatalf("%+v", ev)
	}
	if ev.Time.Location() != time.UTC || ev.Time.Before(before.Truncate(time.Millisecond)) || ev.Time.Nanosecond()%1000 != 0 {
		t.Fatalf("time %v", ev.Time)
	}
	u, err := ParseID(ev.ID)
	if err != nil || !strings.HasPrefix(ev.ID, IDPrefix) {
		t.Fatalf("id %q: %v", ev.ID, err)
	}
	if int64(u.Time()) != ev.Time.UnixMilli() {
		t.Fatalf("ULID ms %d, time ms %d", u.Time(), ev.Time.UnixMilli())
	}
	if err := ev.Validate(); err == nil || !err.(*ValidationError).Has(ExtTenantID) {
		t.Fatalf("tenant must be required: %v", err)
	}
}

func TestC1_SetData(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, ct string
		v        any
		want     string
		wantCT   string
		err      bool
	}{
		{name: "StructAsJSON", v: struct{ A int }{1}, want: `{"A":1}`, wantCT: "application/json"},
		{name: "RawKept", ct: "application/json", v: []byte(`{ "a" : 1 }`), want: `{ "a" : 1 }`, wantCT: "application/json"},
		{name: "StringForJSONIsAJSONString", ct: "application/json", v: "hi", want: `"hi"`, wantCT: "application/json"},
		{name: "StringForText", ct: "text/plain", v: "hi <b>", want: "hi <b>", wantCT: "text/plain"},
		{name: "BytesForBinary", ct: "image/png", v: []byte{1, 2}, want: "\x01\x02", wantCT: "image/png"},
		{name: "StructForTextFails", ct: "text/plain", v: struct{}{}, err: true},
		{name: "NilClears", ct: "application/json", v: nil, want: "", wantCT: "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev := New("urn:x", "t")
			err := ev.SetData(tc.ct, tc.v)
			if tc.err {
				if err == nil {
					t.Fatal("want error")
				}
				return
			}
			if err != nil || string(ev.Data) != tc.want || ev.DataContentType != tc.wantCT {
				t.Fatalf("data %q ct %q err %v", ev.Data, ev.DataContentType, err)
			}
		})
	}
}

func TestC1_PlainURIAgreesWithURLParse(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringMatching(`[a-zA-Z0-9._~:/-]{0,12}`).Draw(t, "s")
		if plainURI(s) && !validURIRef(s) {
			t.Fatalf("plainURI(%q) but url.Parse fails", s)
		}
	})
	for _, s := range []string{"urn:koder:identity", "/tenants/a", "identity-platform", "a.b-c:x/y:z"} {
		if !plainURI(s) {
			t.Errorf("%q not on the fast path", s)
		}
	}
}
