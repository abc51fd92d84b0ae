package streams

import (
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

func TestR1_Naming(t *testing.T) {
	t.Parallel()
	ev := cloudevent.New("/id", "identity.user.erased")
	t.Run("PerService", func(t *testing.T) {
		t.Parallel()
		got, err := PerService("id")(ev)
		if err != nil || got != "koder:events:id" {
			t.Fatalf("PerService(id) = %q, %v", got, err)
		}
	})
	t.Run("PerCategory", func(t *testing.T) {
		t.Parallel()
		for typ, want := range map[string]string{
			"user.created": "events.user", "session.revoked": "events.session",
			"identity.user.erased": "events.identity", "organization.member.added": "events.organization",
		} {
			got, err := PerCategory()(cloudevent.New("/id", typ))
			if err != nil || got != want {
				t.Errorf("PerCategory(%s) = %q, %v; want %q", typ, got, err, want)
			}
		}
		if _, err := PerCategory()(cloudevent.New("/id", "dlq.replayed")); hub.Code(err) != hub.InvalidArgument {
			t.Errorf("type dlq.* must not name the dead-letter stream: %v", err)
		}
	})
	t.Run("ReservedPrefix", func(t *testing.T) {
		t.Parallel()
		for stream, ok := range map[string]bool{
			"koder:events:id": true, "koder:events:id:dlq": true, "koder:events:auth-svc": true,
			"koder:events:": false, "koder:events:ID": false, "koder:events:id:extra": false,
			"koder:events:id:dlq:x": false, "events.user": true, "my-stream": true, "": false,
		} {
			if err := ValidateStream(stream); (err == nil) != ok {
				t.Errorf("ValidateStream(%q) = %v, want ok=%v", stream, err, ok)
			}
		}
		if _, err := PerService("Bad Name")(ev); hub.Code(err) != hub.InvalidArgument {
			t.Errorf("PerService with a bad name: %v", err)
		}
	})
	t.Run("DLQNames", func(t *testing.T) {
		t.Parallel()
		if got := DLQStreamFor("koder:events:id"); got != "koder:events:id:dlq" {
			t.Errorf("DLQStreamFor per service = %q", got)
		}
		if got := DLQStreamFor("events.user"); got != CategoryDLQ {
			t.Errorf("DLQStreamFor per category = %q, want %q (E8)", got, CategoryDLQ)
		}
	})
}

func TestR3_GroupNames(t *testing.T) {
	t.Parallel()
	for group, ok := range map[string]bool{
		"auth-erasure-cascade": true, "sso-erasure-cascade": true, "keys-erasure-cascade": true,
		"billing-invoices": true, "auth": false, "Auth-Erasure": false, "auth_erasure": false,
		"-auth-x": false, "auth--x": false, "auth-": false, "": false, "auth erasure": false,
	} {
		if err := ValidateGroup(group); (err == nil) != ok {
			t.Errorf("ValidateGroup(%q) = %v, want ok=%v", group, err, ok)
		}
	}
}
