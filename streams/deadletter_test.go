package streams

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

func TestDeadLetterFields(t *testing.T) {
	t.Parallel()
	orig := map[string]string{
		"data": `{}`, "type": "user.created", "event_id": "evt_1", "occurred_at": "2026-05-14T12:34:56Z",
		"tenant_id": "t", "subject_id": "u", "actor": "system", "source": "/id",
		"group": "an extension", "error": "another extension",
	}
	f := DeadLetterFields(orig, "boom", 4, "koder:events:id", "auth-erasure-cascade", "1-1", ReasonMaxDeliveries)
	if !slices.Equal(f[:14], []string{"type", "user.created", "event_id", "evt_1", "occurred_at", "2026-05-14T12:34:56Z",
		"tenant_id", "t", "subject_id", "u", "actor", "system", "data", `{}`}) {
		t.Fatalf("R2 fields not first, in order: %v", f)
	}
	vals := map[string]string{}
	for i := 0; i < len(f); i += 2 {
		if _, dup := vals[f[i]]; dup {
			t.Fatalf("duplicate field %s in %v", f[i], f)
		}
		vals[f[i]] = f[i+1]
	}
	back, meta := SplitDeadLetter(vals)
	if !maps.Equal(back, orig) {
		t.Fatalf("original fields did not survive:\n got %v\nwant %v", back, orig)
	}
	want := map[string]string{FieldError: "boom", FieldDeliveryCount: "4", FieldSourceStream: "koder:events:id",
		FieldGroup: "auth-erasure-cascade", FieldOriginalID: "1-1", FieldReason: ReasonMaxDeliveries}
	if !maps.Equal(meta, want) {
		t.Fatalf("meta %v, want %v", meta, want)
	}
}

// Both stream buses answer this type; its JSON form (the admin API's) names every field,
// the delivery count included.
func TestParseDeadLetter(t *testing.T) {
	t.Parallel()
	f := DeadLetterFields(map[string]string{"type": "user.created", "event_id": "evt_1", "data": "{}"}, "boom", 4,
		"koder:events:id", "g", "1-1", ReasonMaxDeliveries)
	vals := map[string]string{}
	for i := 0; i < len(f); i += 2 {
		vals[f[i]] = f[i+1]
	}
	dl := ParseDeadLetter("1700000000123-0", vals)
	if dl.Deliveries != 4 || dl.Error != "boom" || dl.Group != "g" || dl.OriginalID != "1-1" || dl.SourceStream != "koder:events:id" ||
		dl.Reason != ReasonMaxDeliveries || dl.Fields["event_id"] != "evt_1" || dl.Time.UnixMilli() != 1700000000123 {
		t.Fatalf("ParseDeadLetter = %+v", dl)
	}
	b, err := json.Marshal(dl)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	_ = json.Unmarshal(b, &keys)
	for _, k := range []string{"id", "time", "fields", "error", "reason", "source_stream", "group", "original_id", "deliveries"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("JSON %s has no %q", b, k)
		}
	}
	if dl := ParseDeadLetter("not-an-id", vals); !dl.Time.IsZero() {
		t.Errorf("a malformed id gave time %v", dl.Time)
	}
}
