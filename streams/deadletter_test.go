package streams

import (
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
