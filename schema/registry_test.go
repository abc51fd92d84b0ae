package schema

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/koder/eventhub/cloudevent"
)

func event(typ, version, data string) *cloudevent.Event {
	ev := &cloudevent.Event{ID: cloudevent.NewID(), Source: "test", SpecVersion: "1.0", Type: typ,
		DataContentType: "application/json", Data: []byte(data)}
	if version != "" {
		ev.SetExtension(cloudevent.ExtDataVersion, version)
	}
	return ev
}

// TestE2_CatalogueShipsEveryType pins the built-in catalogue to seed 001's tables plus
// identity.user.erased: a type dropped or renamed by accident fails here.
func TestE2_CatalogueShipsEveryType(t *testing.T) {
	t.Parallel()
	want := []string{
		"authentication.failed", "authentication.login", "authentication.logout",
		"authentication.mfa_required", "authentication.mfa_verified",
		"identity.user.erased",
		"membership.created", "membership.removed", "membership.updated",
		"organization.created", "organization.updated",
		"security.event", "security.token_revoked",
		"session.created", "session.expired", "session.revoked",
		"user.created", "user.deleted", "user.disabled", "user.updated", "user.verified",
	}
	var got []string
	for _, ti := range Builtin().Types() {
		got = append(got, ti.Type)
		if !ti.Builtin || !slices.Equal(ti.Versions, []string{"1.0.0"}) {
			t.Errorf("%s: builtin=%v versions=%v", ti.Type, ti.Builtin, ti.Versions)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("catalogue types:\n got %v\nwant %v", got, want)
	}
}

// TestE2_CatalogueFields validates one good and one bad payload per type, so the tables'
// required and optional fields are pinned.
func TestE2_CatalogueFields(t *testing.T) {
	t.Parallel()
	reg := Builtin()
	cases := []struct {
		typ, good  string
		bad        string
		badPointer []string
	}{
		{"user.created", `{"user_id":"u1","email":"a@acme.com","created_at":"2024-01-15T10:30:00Z"}`,
			`{"email":"not-an-email","created_at":"yesterday"}`, []string{"/created_at", "/email", "/user_id"}},
		{"user.created", `{"user_id":"u1","phone":"+55 11 5555-0000","created_at":"2024-01-15T10:30:00Z"}`,
			`{"user_id":"u1","created_at":"2024-01-15T10:30:00Z"}`, []string{"/email", "/phone"}},
		{"user.updated", `{"user_id":"u1","changed_fields":["email"],"updated_at":"2024-01-15T10:30:00Z"}`,
			`{"user_id":"u1","changed_fields":[],"updated_at":"2024-01-15T10:30:00Z"}`, []string{"/changed_fields"}},
		{"user.deleted", `{"user_id":"u1","deleted_at":"2024-01-15T10:30:00Z"}`, `{"user_id":"u1"}`, []string{"/deleted_at"}},
		{"user.disabled", `{"user_id":"u1","status":"banned"}`, `{"user_id":"u1","status":"sleepy"}`, []string{"/status"}},
		{"user.verified", `{"user_id":"u1","channel":"email","verified_at":"2024-01-15T10:30:00Z"}`, `{"user_id":"u1","channel":"fax","verified_at":"2024-01-15T10:30:00Z"}`, []string{"/channel"}},
		{"organization.created", `{"org_id":"o1","name":"Acme","created_by":"u1"}`, `{"org_id":"o1"}`, []string{"/created_by", "/name"}},
		{"organization.updated", `{"org_id":"o1","changed_fields":["name"],"updated_at":"2024-01-15T10:30:00Z"}`, `{"org_id":"o1","changed_fields":"name","updated_at":"2024-01-15T10:30:00Z"}`, []string{"/changed_fields"}},
		{"membership.created", `{"user_id":"u1","org_id":"o1","role":"admin","status":"active"}`, `{"user_id":"u1","org_id":"o1","role":"admin"}`, []string{"/status"}},
		{"membership.updated", `{"user_id":"u1","org_id":"o1","changed_fields":["role"]}`, `{"user_id":"u1","org_id":"o1"}`, []string{"/changed_fields"}},
		{"membership.removed", `{"user_id":"u1","org_id":"o1","removed_by":"u2"}`, `{"user_id":"u1","org_id":"o1"}`, []string{"/removed_by"}},
		{"authentication.login", `{"user_id":"u1","session_id":"s1","product_key":"p","ip":"192.0.2.1","device":"ios"}`, `{"user_id":"u1","session_id":"s1","product_key":"p","ip":"999.1.1.1"}`, []string{"/ip"}},
		{"authentication.logout", `{"user_id":"u1","session_id":"s1","product_key":"p"}`, `{"user_id":"u1"}`, []string{"/product_key", "/session_id"}},
		{"authentication.failed", `{"email":"a@acme.com","ip":"2001:db8::1","reason":"bad password"}`, `{"user_id":"u1"}`, []string{"/ip", "/reason"}},
		{"authentication.mfa_required", `{"user_id":"u1","method":"totp"}`, `{"method":"totp"}`, []string{"/user_id"}},
		{"authentication.mfa_verified", `{"user_id":"u1","method":"totp"}`, `{"user_id":"u1","method":""}`, []string{"/method"}},
		{"session.created", `{"session_id":"s1","user_id":"u1","product_key":"p","session_type":"web"}`, `{"session_id":"s1","user_id":"u1","product_key":"p"}`, []string{"/session_type"}},
		{"session.expired", `{"session_id":"s1","user_id":"u1","reason":"idle"}`, `{"session_id":"s1"}`, []string{"/user_id"}},
		{"session.revoked", `{"session_id":"s1","user_id":"u1","product_key":"p"}`, `{"session_id":"s1","user_id":"u1"}`, []string{"/product_key"}},
		{"security.event", `{"event_type":"login_success","severity":"info","user_id":"u1","ip":"192.0.2.1","user_agent":"curl"}`, `{"event_type":"x","severity":"apocalyptic"}`, []string{"/severity"}},
		{"security.token_revoked", `{"user_id":"u1","token_type":"refresh","reason":"logout"}`, `{"user_id":"u1"}`, []string{"/token_type"}},
		{"identity.user.erased", `{"erasure_id":"ERS-2026-05-14-abc12345"}`, `{"erasure_id":17}`, []string{"/erasure_id"}},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			t.Parallel()
			if err := reg.Validate(event(tc.typ, "1.0.0", tc.good)); err != nil {
				t.Fatalf("good payload rejected: %v", err)
			}
			err := reg.Validate(event(tc.typ, "1.0.0", tc.bad))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("bad payload: got %v, want *ValidationError", err)
			}
			if ve.Code != CodeInvalidEventData {
				t.Errorf("code = %q", ve.Code)
			}
			var ptrs []string
			for _, f := range ve.Fields {
				ptrs = append(ptrs, f.Pointer)
			}
			ptrs = slices.Compact(ptrs)
			if !slices.Equal(ptrs, tc.badPointer) {
				t.Errorf("pointers = %v, want %v (%v)", ptrs, tc.badPointer, ve)
			}
		})
	}
}

func TestV1_ValidationErrorListsEveryField(t *testing.T) {
	t.Parallel()
	err := Builtin().Validate(event("user.created", "1.0.0", `{"email":"nope","created_at":"later"}`))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v", err)
	}
	if len(ve.Fields) < 3 {
		t.Fatalf("want every failing field, got %+v", ve.Fields)
	}
	for _, want := range []string{"INVALID_EVENT_DATA", "data/user_id: is required", "data/email", "data/created_at"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err.Error(), want)
		}
	}
	if ve.HubCode() != 3 {
		t.Errorf("HubCode = %d, want 3 (InvalidArgument)", ve.HubCode())
	}
}

func TestV1_DataShapes(t *testing.T) {
	t.Parallel()
	reg := Builtin()
	for name, ev := range map[string]*cloudevent.Event{
		"not JSON":      event("user.deleted", "", `{"user_id":`),
		"empty data":    event("user.deleted", "", ``),
		"not an object": event("user.deleted", "", `[1,2]`),
	} {
		var ve *ValidationError
		if err := reg.Validate(ev); !errors.As(err, &ve) {
			t.Errorf("%s: got %v, want *ValidationError", name, err)
		}
	}
	bin := event("user.deleted", "", "\x00\x01")
	bin.DataContentType = "application/octet-stream"
	if err := reg.Validate(bin); err == nil {
		t.Error("binary data for a schema'd type was accepted")
	}
	if err := reg.Validate(event("billing.invoice.paid", "", `{"anything":1}`)); err != nil {
		t.Errorf("type without schema rejected in non-strict mode: %v", err)
	}
	reg.SetStrict(true)
	if err := reg.Validate(event("billing.invoice.paid", "", `{}`)); err == nil {
		t.Error("strict registry accepted a type without schema")
	}
}

func TestE5_UnknownMajorIsItsOwnError(t *testing.T) {
	t.Parallel()
	reg := Builtin()
	for _, v := range []string{"1.0.0", "1.4.2", "1.0.0-rc.1", ""} {
		if err := reg.CheckVersion(event("user.deleted", v, `{}`)); err != nil {
			t.Errorf("version %q: %v", v, err)
		}
	}
	for _, v := range []string{"2.0.0", "0.9.0", "1.0", "v1.0.0", "01.0.0"} {
		err := reg.CheckVersion(event("user.deleted", v, `{}`))
		var verr *VersionError
		if !errors.Is(err, ErrUnknownMajor) || !errors.As(err, &verr) {
			t.Errorf("version %q: got %v, want ErrUnknownMajor", v, err)
		}
		if err := reg.Validate(event("user.deleted", v, `{"user_id":"u","deleted_at":"2024-01-15T10:30:00Z"}`)); !errors.Is(err, ErrUnknownMajor) {
			t.Errorf("Validate with version %q: got %v", v, err)
		}
	}
	if err := reg.CheckVersion(event("not.registered", "9.0.0", `{}`)); err != nil {
		t.Errorf("unknown type: %v", err)
	}
}

func TestE5_MajorVersionsCoexist(t *testing.T) {
	t.Parallel()
	reg := Builtin()
	v2 := []byte(`{"x-version":"2.1.0","type":"object","required":["user_id","reason_code"]}`)
	if err := reg.Define("user.deleted", 2, v2); err != nil {
		t.Fatal(err)
	}
	if v, _ := reg.Latest("user.deleted"); v != "2.1.0" {
		t.Errorf("Latest = %q", v)
	}
	if err := reg.Validate(event("user.deleted", "2.1.0", `{"user_id":"u"}`)); err == nil {
		t.Error("v2 schema not applied")
	}
	if err := reg.Validate(event("user.deleted", "1.0.0", `{"user_id":"u","deleted_at":"2024-01-15T10:30:00Z"}`)); err != nil {
		t.Errorf("v1 still valid: %v", err)
	}
	if _, ok := Builtin().Latest("user.deleted"); !ok {
		t.Error("Builtin lost its types")
	}
	if v, _ := Builtin().Latest("user.deleted"); v != "1.0.0" {
		t.Errorf("Define leaked into a fresh Builtin(): %q", v)
	}
}

func TestDefineRejectsBadSchemas(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	for name, tc := range map[string]struct {
		typ    string
		major  int
		schema string
	}{
		"not json":         {"a.b", 1, `{`},
		"bad keyword":      {"a.b", 1, `{"type":"objekt"}`},
		"remote ref":       {"a.b", 1, `{"$ref":"https://example.com/s.json"}`},
		"version mismatch": {"a.b", 1, `{"x-version":"2.0.0"}`},
		"bad type":         {"a..b", 1, `{}`},
		"negative major":   {"a.b", -1, `{}`},
	} {
		if err := reg.Define(tc.typ, tc.major, []byte(tc.schema)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
